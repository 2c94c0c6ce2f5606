#include "agent/core/private_fd_table.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace memprof::agent {
namespace {

bool Open(int fd) { return ::fcntl(fd, F_GETFD) >= 0; }

// What `fd` refers to in the calling thread's table ("" if nothing).
std::string Target(int fd) {
  char buf[256];
  const std::string link = "/proc/thread-self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

TEST(PrivateFdTableTest, TheThreadKeepsWhatItWasToldAndNothingElseOfTheHosts) {
  int host[2];
  int kept[2];
  ASSERT_EQ(::pipe(host), 0);
  ASSERT_EQ(::pipe(kept), 0);
  bool entered = false;
  bool host_fd_in_thread = true;
  bool kept_fd_in_thread = false;
  int opened_by_thread = -1;
  std::thread thread([&] {
    entered = EnterPrivateDescriptorTable({kept[0], kept[1]});
    host_fd_in_thread = Open(host[0]) || Open(host[1]);
    kept_fd_in_thread = Open(kept[0]) && Open(kept[1]);
    opened_by_thread = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    // The kept pipe works from this table.
    (void)!::write(kept[1], "k", 1);
  });
  thread.join();
  ASSERT_TRUE(entered);
  EXPECT_FALSE(host_fd_in_thread) << "the thread's copies of the host's files are closed";
  EXPECT_TRUE(kept_fd_in_thread);
  ASSERT_GE(opened_by_thread, 0);
  // The host's table is as it was: its files open, the kept pipe carries the
  // byte, and what the thread opened is not in it.
  EXPECT_TRUE(Open(host[0]) && Open(host[1]));
  char c = 0;
  EXPECT_EQ(::read(kept[0], &c, 1), 1);
  EXPECT_EQ(c, 'k');
  EXPECT_NE(Target(opened_by_thread), "/dev/null")
      << "fd " << opened_by_thread << " opened by the thread is the thread's only";
  for (int fd : {host[0], host[1], kept[0], kept[1]}) ::close(fd);
}

TEST(PrivateFdTableTest, StandardStreamsStay) {
  bool streams = false;
  std::thread thread([&] {
    ASSERT_TRUE(EnterPrivateDescriptorTable({}));
    streams = Open(0) && Open(1) && Open(2);
  });
  thread.join();
  EXPECT_TRUE(streams);
}

}  // namespace
}  // namespace memprof::agent
