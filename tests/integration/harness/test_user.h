#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_TEST_USER_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_TEST_USER_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/result.h"

namespace memprof::integration {

// The unprivileged account the permission tests run targets and memprofctl
// as. Created on first use (useradd --system, no home); an existing account
// of that name is reused and never removed, so reruns and parallel test
// processes are harmless.
inline constexpr char kTestUserName[] = "memprof-test";

struct TestUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;

  // argv run as this user through setpriv (real and effective ids, no
  // supplementary groups). `--pdeathsig keep` restores the parent-death
  // signal the harness set, which the credential change clears, so a target
  // started this way still dies with the test binary.
  std::vector<std::string> Wrap(std::vector<std::string> argv) const;
};

// The test user, created if needed. Fails with a message suitable for
// GTEST_SKIP() when the test does not run as root or useradd/setpriv are
// missing.
[[nodiscard]] Result<TestUser> EnsureTestUser();

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_TEST_USER_H_
