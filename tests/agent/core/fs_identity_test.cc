#include "agent/core/fs_identity.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace memprof::agent {
namespace {

constexpr uid_t kNobody = 65534;

// The process runs as `nobody` (effective ids only: it can come back) while
// it lives, the way varnishd's manager spends its time as its service user.
class RunAsNobody {
 public:
  RunAsNobody() { ok_ = ::setresgid(-1, kNobody, -1) == 0 && ::setresuid(-1, kNobody, -1) == 0; }
  ~RunAsNobody() {
    ::setresuid(-1, 0, -1);
    ::setresgid(-1, 0, -1);
  }
  bool ok() const { return ok_; }

 private:
  bool ok_ = false;
};

class ScopedFsIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::getuid() != 0) GTEST_SKIP() << "needs root, to change the process's user";
    ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  }

  int MakeDir(const char* name) const { return ::mkdir((dir_ + "/" + name).c_str(), 0700); }

  test_support::TempDir tmp_{"memprof-fsid-test"};
  std::string dir_ = tmp_.path();
};

TEST_F(ScopedFsIdentityTest, ActsAsTheIdentityGivenWhileTheProcessRunsAsAnother) {
  const FsIdentity root = EffectiveIdentity();
  {
    RunAsNobody nobody;
    ASSERT_TRUE(nobody.ok());
    ASSERT_EQ(MakeDir("refused"), -1);
    EXPECT_EQ(errno, EACCES) << "nobody may not write into root's 0700 directory";
    {
      ScopedFsIdentity as(root);
      EXPECT_EQ(as.Call([&] { return MakeDir("made"); }), 0) << std::strerror(errno);
    }
    // The scope put back what the thread had.
    EXPECT_EQ(MakeDir("refused-again"), -1);
    EXPECT_EQ(errno, EACCES);
  }
  struct stat st{};
  ASSERT_EQ(::stat((dir_ + "/made").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
}

TEST_F(ScopedFsIdentityTest, RepeatsARefusedCallOnlyWhileTheProcessIsSomeoneElse) {
  int attempts = 0;
  auto refused = [&] {
    ++attempts;
    errno = EACCES;
    return -1;
  };
  {
    ScopedFsIdentity as(EffectiveIdentity());
    EXPECT_EQ(as.Call(refused), -1);
    EXPECT_EQ(errno, EACCES);
    EXPECT_EQ(attempts, 1) << "nobody took the identity away: one attempt";
  }
  const FsIdentity root = EffectiveIdentity();
  RunAsNobody nobody;
  ASSERT_TRUE(nobody.ok());
  attempts = 0;
  ScopedFsIdentity as(root);
  EXPECT_EQ(as.Call(refused), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(attempts, 4) << "a few attempts, not an endless loop";
}

TEST_F(ScopedFsIdentityTest, OtherFailuresAreReturnedAtOnce) {
  const FsIdentity root = EffectiveIdentity();
  RunAsNobody nobody;
  ASSERT_TRUE(nobody.ok());
  ScopedFsIdentity as(root);
  int attempts = 0;
  EXPECT_EQ(as.Call([&] {
    ++attempts;
    return ::mkdir((dir_ + "/missing/child").c_str(), 0700);
  }),
            -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(attempts, 1);
}

}  // namespace
}  // namespace memprof::agent
