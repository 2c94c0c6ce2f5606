#include "agent/connection_acceptor.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>

#include <gtest/gtest.h>

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
        (*reg)->listen_fd(), [&](Fd fd) { accepted += fd.valid() ? 1 : 0; },
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
