#include "agent/core/connection_acceptor.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "agent/core/socket_registry.h"
#include "agent/service/peer_registry.h"
#include "agent/shared/owned_fd.h"
#include "common/unix_socket.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait_until.h"

namespace memprof::agent {

using test_support::WaitUntil;

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

// named -u bind: the socket is handed to bind when root is given up.
TEST(PeerRegistryTest, ASocketHandedToAnotherUserServesThatUser) {
  PeerRegistry peers(0);
  peers.Record(7, PeerCredentials{1, 105, 105});
  EXPECT_TRUE(peers.Refusal("fd:7").has_value());
  peers.SetOwner(105);
  peers.Record(8, PeerCredentials{2, 105, 105});
  peers.Record(9, PeerCredentials{3, 0, 0});
  EXPECT_EQ(peers.Refusal("fd:8"), std::nullopt);
  EXPECT_EQ(peers.Refusal("fd:9"), std::nullopt);
  auto refusal = peers.Refusal("fd:7");
  ASSERT_TRUE(refusal.has_value()) << "judged when it connected";
  EXPECT_NE(refusal->find("only root may"), std::string::npos) << *refusal;
}

TEST(PeerRegistryTest, UnknownOrMalformedPeersAreRefused) {
  PeerRegistry peers(1000);
  peers.Record(7, PeerCredentials{1, 1000, 1000});
  for (const char* peer : {"fd:8", "fd:", "fd:7x", "fd:-7", "ipv4:127.0.0.1:80", "", "7"}) {
    EXPECT_TRUE(peers.Refusal(peer).has_value()) << peer;
  }
}

class ConnectionAcceptorTest : public ::testing::Test {
 protected:
  std::unique_ptr<ConnectionAcceptor> MakeAcceptor(pid_t pid, std::chrono::milliseconds delay) {
    return std::make_unique<ConnectionAcceptor>(
        ConnectionAcceptor::Options{dir_, pid, delay, nullptr, nullptr},
        [this](Fd fd, const PeerCredentials& peer) {
          accepted_ += fd.valid() && peer.pid == ::getpid() ? 1 : 0;
          last_fd_ = fd.get();
        },
        [this]() -> std::optional<std::chrono::milliseconds> {
          ++ticks_;
          return std::nullopt;
        });
  }

  test_support::TempDir tmp_{"memprof-acceptor-test"};
  std::string dir_ = tmp_.path();
  std::atomic<int> accepted_{0};
  std::atomic<int> ticks_{0};
  std::atomic<int> last_fd_{-1};
};

TEST_F(ConnectionAcceptorTest, HandsOverConnectionsAndStopsPromptly) {
  auto acceptor = MakeAcceptor(777, std::chrono::milliseconds(0));
  ASSERT_TRUE(acceptor->Start());
  ASSERT_EQ(acceptor->socket_path(), dir_ + "/777.sock");
  for (int i = 0; i < 3; ++i) {
    auto fd = ConnectUnixSocket(acceptor->socket_path(), std::chrono::seconds(1));
    ASSERT_TRUE(fd) << fd.error().message;
  }
  EXPECT_TRUE(WaitUntil([&] { return accepted_ == 3; }, std::chrono::seconds(5)));
  EXPECT_GE(ticks_.load(), 1);
  // Accepted connections are moved away from the small numbers hosts use.
  EXPECT_GE(last_fd_.load(), HighFdFloor());
  acceptor->Stop();
  acceptor.reset();
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/777.sock"));
}

TEST_F(ConnectionAcceptorTest, ADelayedStartPublishesLater) {
  auto acceptor = MakeAcceptor(778, std::chrono::milliseconds(200));
  ASSERT_TRUE(acceptor->Start());
  EXPECT_EQ(acceptor->socket_path(), "");
  EXPECT_TRUE(WaitUntil([&] { return !acceptor->socket_path().empty(); }, std::chrono::seconds(5)));
  auto fd = ConnectUnixSocket(dir_ + "/778.sock", std::chrono::seconds(1));
  ASSERT_TRUE(fd) << fd.error().message;
  EXPECT_TRUE(WaitUntil([&] { return accepted_ == 1; }, std::chrono::seconds(5)));
}

// A forked child that stops (exits) while its agent still waits to publish:
// the wait ends at once, and nothing is ever published that exit would
// have to remove.
TEST_F(ConnectionAcceptorTest, AStopDuringThePublishDelayPublishesNothing) {
  auto acceptor = MakeAcceptor(779, std::chrono::seconds(30));
  ASSERT_TRUE(acceptor->Start());
  const auto before = std::chrono::steady_clock::now();
  acceptor->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(1));
  EXPECT_EQ(acceptor->socket_path(), "");
  acceptor.reset();
  EXPECT_TRUE(std::filesystem::is_empty(dir_)) << "left in " << dir_;
}

// Numbers at or above the agent's floor that are open now.
std::vector<int> OpenHighDescriptors() {
  std::vector<int> fds;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(entry.path().filename().string());
    if (fd >= HighFdFloor()) fds.push_back(fd);
  }
  return fds;
}

TEST_F(ConnectionAcceptorTest, KeepsServingWhenTheHostClosesEveryDescriptor) {
  auto acceptor = MakeAcceptor(779, std::chrono::milliseconds(0));
  ASSERT_TRUE(acceptor->Start());
  // In the host's table: only the wake-up pipe, which host threads write to.
  // The socket is in the accept thread's own table.
  const std::vector<int> agent_fds = OpenHighDescriptors();
  ASSERT_EQ(agent_fds.size(), 2u);
  // The host closes everything it did not open, then opens its own files,
  // which take the lowest free numbers.
  for (int fd : agent_fds) ASSERT_EQ(::close(fd), 0);
  int host_pipe[2];
  ASSERT_EQ(::pipe(host_pipe), 0);
  // Nothing of the agent's was closed: not even the next connection is lost.
  auto connection = ConnectUnixSocket(dir_ + "/779.sock", std::chrono::seconds(1));
  ASSERT_TRUE(connection) << connection.error().message;
  EXPECT_TRUE(WaitUntil([&] { return accepted_ >= 1; }, std::chrono::seconds(5)));
  // Without its pipe in the host's table, Stop() wakes the thread through the socket.
  acceptor->Stop();
  acceptor.reset();
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/779.sock"));
  // The host's own descriptors were left alone.
  EXPECT_EQ(::write(host_pipe[1], "x", 1), 1);
  char c = 0;
  EXPECT_EQ(::read(host_pipe[0], &c, 1), 1);
  ::close(host_pipe[0]);
  ::close(host_pipe[1]);
}

TEST_F(ConnectionAcceptorTest, RunsTasksOnItsOwnThread) {
  auto acceptor = MakeAcceptor(780, std::chrono::milliseconds(0));
  ASSERT_TRUE(acceptor->Start());
  std::atomic<pid_t> task_tid{0};
  ASSERT_TRUE(acceptor->RunOnThread([&] { task_tid = ::gettid(); }));
  EXPECT_NE(task_tid.load(), 0);
  EXPECT_NE(task_tid.load(), ::gettid());
  acceptor->Stop();
  EXPECT_FALSE(acceptor->RunOnThread([] {}));
}

}  // namespace
}  // namespace memprof::agent
