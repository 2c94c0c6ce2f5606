#include "agent/connection_acceptor.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>

#include <gtest/gtest.h>

#include "agent/peer_registry.h"
#include "agent/socket_registry.h"
#include "common/unix_socket.h"
#include "tests/agent/wait_for.h"

namespace memprof::agent {
namespace {

TEST(PeerAllowedTest, OwnUidAndRootOnly) {
  EXPECT_TRUE(PeerAllowed(1000, 1000));
  EXPECT_TRUE(PeerAllowed(0, 1000));
  EXPECT_FALSE(PeerAllowed(1001, 1000));
  EXPECT_TRUE(PeerAllowed(0, 0));
  EXPECT_FALSE(PeerAllowed(1000, 0));
}

TEST(PeerRegistryTest, RefusesOtherUsersWithAMessageThatSaysWhatToDo) {
  PeerRegistry peers(1000);
  peers.Record(7, PeerCredentials{4242, 1001, 1001});
  auto refusal = peers.Refusal("fd:7");
  ASSERT_TRUE(refusal.has_value());
  EXPECT_NE(refusal->find("uid 1001 (pid 4242) may not use this memprof agent"), std::string::npos)
      << *refusal;
  EXPECT_NE(refusal->find("run memprofctl as the target's user or as root"), std::string::npos);
}

TEST(PeerRegistryTest, ServesOwnUidAndRoot) {
  PeerRegistry peers(1000);
  peers.Record(7, PeerCredentials{1, 1000, 1000});
  peers.Record(8, PeerCredentials{2, 0, 0});
  EXPECT_EQ(peers.Refusal("fd:7"), std::nullopt);
  EXPECT_EQ(peers.Refusal("fd:8"), std::nullopt);
}

TEST(PeerRegistryTest, AReusedDescriptorGetsTheNewConnectionsCredentials) {
  PeerRegistry peers(1000);
  peers.Record(7, PeerCredentials{1, 1000, 1000});
  peers.Record(7, PeerCredentials{2, 1001, 1001});
  EXPECT_TRUE(peers.Refusal("fd:7").has_value());
  peers.Record(7, PeerCredentials{3, 1000, 1000});
  EXPECT_EQ(peers.Refusal("fd:7"), std::nullopt);
}

TEST(PeerRegistryTest, UnknownOrMalformedPeersAreRefused) {
  PeerRegistry peers(1000);
  peers.Record(7, PeerCredentials{1, 1000, 1000});
  for (const char* peer : {"fd:8", "fd:", "fd:7x", "fd:-7", "ipv4:127.0.0.1:80", "", "7"}) {
    EXPECT_TRUE(peers.Refusal(peer).has_value()) << peer;
  }
}

TEST(ConnectionAcceptorTest, HandsOverConnectionsAndStopsPromptly) {
  char tmpl[] = "/tmp/memprof-acceptor-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  {
    auto reg = SocketRegistry::Listen(dir, 777);
    ASSERT_TRUE(reg);
    std::atomic<int> accepted{0};
    std::atomic<int> ticks{0};
    ConnectionAcceptor acceptor(
        (*reg)->listen_fd(), [&](Fd fd, const PeerCredentials& peer) {
          accepted += fd.valid() && peer.pid == ::getpid() ? 1 : 0;
        },
        [&]() -> std::optional<std::chrono::milliseconds> {
          ++ticks;
          return std::nullopt;
        });
    ASSERT_TRUE(acceptor.Start());
    for (int i = 0; i < 3; ++i) {
      auto fd = ConnectUnixSocket((*reg)->path(), std::chrono::seconds(1));
      ASSERT_TRUE(fd) << fd.error().message;
    }
    EXPECT_TRUE(WaitFor([&] { return accepted == 3; }, std::chrono::seconds(5)));
    EXPECT_GE(ticks.load(), 1);
    acceptor.Stop();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace memprof::agent
