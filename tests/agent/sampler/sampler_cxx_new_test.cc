// operator new and delete of an allocator that defines its own: hooked in a
// child started with such an allocator preloaded (a process cannot swap its
// operator new after start), and not hooked where libstdc++'s call malloc.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "agent/sampler/sampler.h"
#include "tests/agent/sampler/sampler_test_support.h"

extern char** environ;

namespace memprof::agent {
namespace {

constexpr char kChildFlag[] = "MEMPROF_SAMPLER_FAKE_NEW_CHILD";

// Never inlined and never seen through: so that new[] really reaches the
// host's operator new[].
__attribute__((noinline)) int* NewInts(size_t n) { return new int[n]; }

TEST(SamplerCxxNewChild, OperatorNewOfTheAllocatorIsSampled) {
  if (std::getenv(kChildFlag) == nullptr) GTEST_SKIP() << "run by SamplerCxxNewTest";
  ASSERT_TRUE(testing::ActivateForTest(1));
  int* p = NewInts(1000);
  EXPECT_TRUE(Sampler::IsLiveSample(p));
  const auto address = reinterpret_cast<uintptr_t>(p);
  delete[] p;
  EXPECT_FALSE(Sampler::IsLiveSample(reinterpret_cast<void*>(address)));
  Sampler::Deactivate();
  Sampler::Reset();
  EXPECT_EQ(Sampler::Status().patched_slots, 0u);
}

TEST(SamplerCxxNewTest, HookedWhereTheAllocatorDefinesIt) {
  Dl_info malloc_home{};
  ASSERT_NE(dladdr(dlsym(RTLD_DEFAULT, "malloc"), &malloc_home), 0);
  if (std::string(malloc_home.dli_fname).find("san.so") != std::string::npos) {
    GTEST_SKIP() << "a sanitizer runtime must be the first library; nothing may be preloaded";
  }
  std::string preload = std::string("LD_PRELOAD=") + MEMPROF_SAMPLER_FAKE_NEW;
  std::string flag = std::string(kChildFlag) + "=1";
  char filter[] = "--gtest_filter=SamplerCxxNewChild.*";
  char self[] = "/proc/self/exe";
  char* argv[] = {self, filter, nullptr};
  char* envp[] = {preload.data(), flag.data(), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, self, nullptr, nullptr, argv, envp), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's test failed (its output is above)";
}

TEST(SamplerCxxNewTest, LibstdcxxsOperatorNewIsSampledThroughMalloc) {
  // Here operator new is libstdc++'s: not hooked itself (no double count),
  // its malloc call is.
  ASSERT_TRUE(testing::ActivateForTest(1));
  int* p = NewInts(1000);
  EXPECT_TRUE(Sampler::IsLiveSample(p));
  delete[] p;
  Sampler::Deactivate();
  Sampler::Reset();
}

}  // namespace
}  // namespace memprof::agent
