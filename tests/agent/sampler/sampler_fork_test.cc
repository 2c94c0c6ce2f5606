// fork() while threads allocate through the hooks: the child's sampler
// works (its locks free, its table the parent's), and so does the parent's.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fcntl.h>
#include <thread>

#include "agent/sampler/sampler.h"
#include "tests/agent/sampler/sampler_test_lib.h"
#include "tests/agent/sampler/sampler_test_support.h"

namespace memprof::agent {
namespace {

// In the child: sample, dump, deactivate; 0 when all of it worked. alarm()
// turns a deadlock into a failure instead of a hung test.
int ChildChecks(const testing::SamplerTestLib& lib, void* from_parent) {
  alarm(20);
  void* mine = lib.malloc(64);
  bool ok = Sampler::IsLiveSample(mine) && Sampler::IsLiveSample(from_parent);
  const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  ok = ok && Sampler::WriteProfile(null_fd).has_value();
  Sampler::Deactivate();
  ok = ok && !Sampler::Status().active;
  return ok ? 0 : 1;
}

TEST(SamplerForkTest, ChildInheritsAConsistentSampler) {
  auto& lib = testing::PreloadedTestLib();
  ASSERT_NE(lib.handle, nullptr);
  Sampler::Reset();
  ASSERT_TRUE(testing::ActivateForTest((1)));
  void* from_parent = lib.malloc(128);
  ASSERT_TRUE(Sampler::IsLiveSample(from_parent));
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    while (!stop.load(std::memory_order_relaxed)) lib.free(lib.malloc(512));
  });
  for (int i = 0; i < 20; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(ChildChecks(lib, from_parent));
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "child " << i << " died, status " << status;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "child " << i;
  }
  stop = true;
  churn.join();
  EXPECT_TRUE(Sampler::Status().active);  // the children's deactivation was theirs
  lib.free(from_parent);
  Sampler::Deactivate();
  Sampler::Reset();
}

}  // namespace
}  // namespace memprof::agent
