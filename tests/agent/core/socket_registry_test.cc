#include "agent/core/socket_registry.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace memprof::agent {
namespace {

namespace fs = std::filesystem;

class SocketRegistryTest : public ::testing::Test {
 protected:
  std::string SocketPath(pid_t pid) const { return dir_ + "/" + std::to_string(pid) + ".sock"; }

  test_support::TempDir tmp_{"memprof-registry-test"};
  std::string root_ = tmp_.path();
  std::string dir_ = root_ + "/sockets";
};

TEST_F(SocketRegistryTest, CreatesPrivateDirectoryAndOwnerOnlySocket) {
  auto reg = SocketRegistry::Listen(dir_, 4242);
  ASSERT_TRUE(reg) << reg.error().message;
  EXPECT_EQ((*reg)->path(), SocketPath(4242));
  struct stat st{};
  ASSERT_EQ(::lstat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::lstat(SocketPath(4242).c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Nothing but the socket is left in the directory (no staging leftovers).
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(SocketRegistryTest, RemovesItsSocketWhenDestroyed) {
  {
    auto reg = SocketRegistry::Listen(dir_, 4243);
    ASSERT_TRUE(reg);
    EXPECT_TRUE(fs::exists(SocketPath(4243)));
  }
  EXPECT_FALSE(fs::exists(SocketPath(4243)));
}

TEST_F(SocketRegistryTest, ReplacesAStaleSocketOfTheSamePid) {
  {
    // Forgets its socket without removing it (and without leaking itself).
    auto first = SocketRegistry::Listen(dir_, 4244);
    ASSERT_TRUE(first);
    (*first)->AbandonAfterFork();
  }
  ASSERT_TRUE(fs::exists(SocketPath(4244)));  // left behind, as after SIGKILL
  auto second = SocketRegistry::Listen(dir_, 4244);
  ASSERT_TRUE(second) << second.error().message;
}

TEST_F(SocketRegistryTest, RefusesToReplaceSomethingThatIsNotASocket) {
  ASSERT_TRUE(fs::create_directories(dir_));
  ::chmod(dir_.c_str(), 0700);
  { int fd = ::open(SocketPath(4245).c_str(), O_CREAT | O_WRONLY, 0600); ::close(fd); }
  auto reg = SocketRegistry::Listen(dir_, 4245);
  ASSERT_FALSE(reg);
  EXPECT_EQ(reg.error().code, ErrorCode::kPermissionDenied);
  EXPECT_TRUE(fs::is_regular_file(SocketPath(4245))) << "the file must be left alone";
}

TEST_F(SocketRegistryTest, RefusesASymlinkedDirectory) {
  ASSERT_TRUE(fs::create_directories(root_ + "/real"));
  fs::create_directory_symlink(root_ + "/real", dir_);
  auto reg = SocketRegistry::Listen(dir_, 4246);
  ASSERT_FALSE(reg);
  EXPECT_NE(reg.error().message.find("symbolic link"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(root_ + "/real"));
}

TEST_F(SocketRegistryTest, RefusesAWorldWritableDirectoryWithoutStickyBit) {
  ASSERT_TRUE(fs::create_directories(dir_));
  ::chmod(dir_.c_str(), 0777);
  auto reg = SocketRegistry::Listen(dir_, 4247);
  ASSERT_FALSE(reg);
  EXPECT_NE(reg.error().message.find("sticky"), std::string::npos);
}

TEST_F(SocketRegistryTest, ForkedChildNeverRemovesTheParentsSocket) {
  auto reg = SocketRegistry::Listen(dir_, ::getpid());
  ASSERT_TRUE(reg);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    reg->reset();  // the child's copy is destroyed: it must not unlink
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(fs::exists((*reg)->path()));
}

// In a child (the registry is per process): publishes in a sticky directory
// as root, hands the socket over to `heir` if asked, drops to `heir` for good
// and destroys the registry. Exit status 0: the socket is gone.
int DropRootWithSocket(const std::string& dir, uid_t heir, bool hand_over) {
  auto reg = SocketRegistry::Listen(dir, ::getpid());
  if (!reg) return 2;
  const std::string path = (*reg)->path();
  if (hand_over && !(*reg)->HandOver(FsIdentity{heir, heir})) return 3;
  if (::setresgid(heir, heir, heir) != 0 || ::setresuid(heir, heir, heir) != 0) return 4;
  reg->reset();
  return fs::exists(path) ? 1 : 0;
}

int ExitCodeOfChild(const std::function<int()>& body) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(body());
  int status = 0;
  if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// named -u bind: published as root, then root is gone for good. Only the
// file's owner (or root) may remove it from a sticky directory.
TEST_F(SocketRegistryTest, ASocketHandedOverIsRemovedByItsHeirAfterRootIsGone) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  constexpr uid_t kHeir = 54329;
  ASSERT_TRUE(fs::create_directory(dir_));
  ASSERT_EQ(::chmod(dir_.c_str(), 01777), 0);
  ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);
  EXPECT_EQ(ExitCodeOfChild([&] { return DropRootWithSocket(dir_, kHeir, true); }), 0);
  // Without the hand-over the socket stays root's, and stays.
  EXPECT_EQ(ExitCodeOfChild([&] { return DropRootWithSocket(dir_, kHeir, false); }), 1);
}

TEST_F(SocketRegistryTest, HandOverChangesTheFileOwnerAndTheIdentity) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  auto reg = SocketRegistry::Listen(dir_, 4250);
  ASSERT_TRUE(reg);
  ASSERT_EQ(::chmod(root_.c_str(), 0711), 0);
  ASSERT_EQ(::chmod(dir_.c_str(), 01777), 0);  // as /tmp/memprof: the heir may write it
  const FsIdentity heir{54330, 54331};
  ASSERT_TRUE((*reg)->HandOver(heir));
  struct stat st{};
  ASSERT_EQ(::lstat(SocketPath(4250).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, heir.uid);
  EXPECT_EQ(st.st_gid, heir.gid);
  EXPECT_EQ((*reg)->identity(), heir);
  ASSERT_TRUE((*reg)->HandOver(FsIdentity{0, 0}));  // given back
  ASSERT_EQ(::lstat(SocketPath(4250).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
}

// A directory the heir may not write (root's, 0700): the socket would be one
// its process can neither remove nor replace, so it is not handed over, and
// the reason is the one a publish as that user gets.
TEST_F(SocketRegistryTest, NoHandOverIntoADirectoryTheHeirMayNotWrite) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  auto reg = SocketRegistry::Listen(dir_, 4251);
  ASSERT_TRUE(reg);
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  auto r = (*reg)->HandOver(FsIdentity{54330, 54331});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("is not writable by uid 54330"), std::string::npos)
      << r.error().message;
  struct stat st{};
  ASSERT_EQ(::lstat(SocketPath(4251).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ((*reg)->identity().uid, 0u);
}

}  // namespace
}  // namespace memprof::agent
