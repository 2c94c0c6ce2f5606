#include "common/unix_socket.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace memprof {
namespace {

class UnixSocketTest : public ::testing::Test {
 protected:
  std::string Path() const { return dir_ + "/s.sock"; }

  Fd Bind(bool listen) {
    Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, Path().c_str());
    EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    if (listen) {
      EXPECT_EQ(::listen(fd.get(), 4), 0);
    }
    return fd;
  }

  test_support::TempDir tmp_{"memprof-unix-test"};
  std::string dir_ = tmp_.path();
};

TEST_F(UnixSocketTest, MissingSocketIsNotFound) {
  auto r = ConnectUnixSocket(Path(), std::chrono::seconds(1));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_NE(r.error().message.find(Path()), std::string::npos);
}

TEST_F(UnixSocketTest, SocketNobodyListensOnIsUnavailableAndCalledStale) {
  Fd bound = Bind(/*listen=*/false);
  auto r = ConnectUnixSocket(Path(), std::chrono::seconds(1));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(r.error().message.find("stale"), std::string::npos);
}

TEST_F(UnixSocketTest, ConnectsNonBlockingAndSeesOwnCredentials) {
  Fd listener = Bind(/*listen=*/true);
  auto fd = ConnectUnixSocket(Path(), std::chrono::seconds(1));
  ASSERT_TRUE(fd) << fd.error().message;
  EXPECT_NE(::fcntl(fd->get(), F_GETFL) & O_NONBLOCK, 0);
  EXPECT_NE(::fcntl(fd->get(), F_GETFD) & FD_CLOEXEC, 0);
  auto peer = GetPeerCredentials(fd->get());
  ASSERT_TRUE(peer);
  EXPECT_EQ(peer->pid, ::getpid());
  EXPECT_EQ(peer->uid, ::geteuid());
}

TEST_F(UnixSocketTest, NobodyListensOnlyWhenConnectIsRefused) {
  EXPECT_FALSE(NobodyListens(Path())) << "a missing file says nothing";
  {
    Fd listener = Bind(true);
    EXPECT_FALSE(NobodyListens(Path()));
  }
  // The listener is closed but its file stays: what SIGKILL leaves behind.
  EXPECT_TRUE(NobodyListens(Path()));
}

TEST_F(UnixSocketTest, TooLongPathIsRejected) {
  auto r = ConnectUnixSocket("/" + std::string(200, 'x'), std::chrono::seconds(1));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace memprof
