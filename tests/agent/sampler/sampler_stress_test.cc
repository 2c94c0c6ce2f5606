// Threads allocating in every way, one thread opening and closing a library
// in a loop and one forking, while activation, deactivation and allocation
// windows run 50 times: no crash, no deadlock, no corruption, every child
// healthy, and every slot put back at the end.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "agent/sampler/sampler.h"
#include "tests/agent/sampler/sampler_test_lib.h"
#include "tests/agent/sampler/sampler_test_support.h"

namespace memprof::agent {
namespace {

// One worker: blocks of varying sizes through the library and the
// executable, each filled with a pattern checked before it is freed.
bool Churn(const testing::SamplerTestLib& lib, const std::atomic<bool>& stop, unsigned seed) {
  constexpr int kSlots = 64;
  unsigned char* blocks[kSlots] = {};
  size_t sizes[kSlots] = {};
  bool ok = true;
  for (unsigned i = 0; !stop.load(std::memory_order_relaxed); ++i) {
    const int k = static_cast<int>((seed + i * 2654435761u) % kSlots);
    if (blocks[k] != nullptr) {
      for (size_t j = 0; j < sizes[k]; j += 97) ok &= blocks[k][j] == static_cast<unsigned char>(k);
    }
    const size_t size = 16 + ((seed * 31 + i * 7919) % 8192);
    switch (i % 5) {
      case 0: lib.free(blocks[k]); blocks[k] = static_cast<unsigned char*>(lib.malloc(size)); break;
      case 1: blocks[k] = static_cast<unsigned char*>(lib.realloc(blocks[k], size)); break;
      case 2: std::free(blocks[k]); blocks[k] = static_cast<unsigned char*>(memalign(64, size)); break;
      case 3: lib.free(blocks[k]); blocks[k] = static_cast<unsigned char*>(lib.calloc(1, size)); break;
      default: blocks[k] = static_cast<unsigned char*>(std::realloc(blocks[k], size)); break;
    }
    if (blocks[k] == nullptr) return false;
    sizes[k] = size;
    std::memset(blocks[k], k, size);
  }
  for (unsigned char* b : blocks) std::free(b);
  return ok;
}

// Opens the second test library, allocates through its GOT (patched on the
// way in while active), closes it: again and again.
bool OpenAndClose(const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) {
    testing::SamplerTestLib lib = testing::SamplerTestLib::Open(MEMPROF_SAMPLER_TESTLIB2);
    if (lib.handle == nullptr || lib.malloc == nullptr) return false;
    void* p = lib.malloc(4096);
    if (p == nullptr) return false;
    std::memset(p, 7, 4096);
    lib.free(p);
    if (dlclose(lib.handle) != 0) return false;
  }
  return true;
}

// Forks again and again; each child allocates through the hooks it
// inherited and must exit cleanly.
bool ForkAgain(const testing::SamplerTestLib& lib, const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) {
    const pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
      // GCC 12's ASan and TSan runtimes do not hold their allocators' locks
      // across fork(): a child of a process whose other threads allocate may
      // find one taken for ever (seen under TSan: the child waits in the
      // runtime's allocator mutex). The child checks the sampler without
      // allocating there.
      _exit(Sampler::RecordingState().on ? 4 : 0);
#endif
      for (int i = 0; i < 64; ++i) {
        void* p = lib.malloc(1024 + static_cast<size_t>(i) * 512);
        if (p == nullptr) _exit(2);
        std::memset(p, i, 1024);
        void* q = std::realloc(p, 8192);
        if (q == nullptr) _exit(3);
        std::free(q);
      }
      _exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      return false;
    }
  }
  return true;
}

void CountText(void* total, const char* text) { *static_cast<size_t*>(total) += std::strlen(text); }

TEST(SamplerStressTest, ActivateDeactivate50TimesUnderLoad) {
  auto& lib = testing::PreloadedTestLib();
  ASSERT_NE(lib.handle, nullptr);
  // The executable's lazy slots for what the workers call are bound first,
  // so that only the sampler could change them during the test.
  std::free(std::realloc(nullptr, 16));
  std::free(memalign(64, 16));
  std::free(std::calloc(1, 16));
  testing::SnapshotSlots();
  const testing::SlotValues before = testing::SnapshotSlots();
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  std::atomic<int> loader_failures{0};
  std::atomic<int> fork_failures{0};
  for (unsigned t = 0; t < 4; ++t) {
    workers.emplace_back([&, t] {
      if (!Churn(lib, stop, t + 1)) failures.fetch_add(1);
    });
  }
  workers.emplace_back([&] {
    if (!OpenAndClose(stop)) loader_failures.fetch_add(1);
  });
  workers.emplace_back([&] {
    if (!ForkAgain(lib, stop)) fork_failures.fetch_add(1);
  });
  const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  size_t window_text = 0;
  for (int round = 0; round < 50; ++round) {
    ASSERT_TRUE(Sampler::Activate(testing::TestOptions(round % 2 == 0 ? 4096 : 65536)));
    const bool window = round % 5 == 0;
    if (window) {
      EXPECT_TRUE(Sampler::BeginRecording(round % 10 == 0 ? 64 : 4096).has_value());
    }
    if (round % 10 == 0) {
      EXPECT_TRUE(Sampler::WriteProfile(null_fd).has_value());
    }
    if (window) {
      EXPECT_TRUE(Sampler::WriteRecentAllocations(&CountText, &window_text).has_value());
      Sampler::EndRecording();
    }
    Sampler::Deactivate();
    if (round % 7 == 0) Sampler::Reset();
  }
  stop = true;
  for (std::thread& w : workers) w.join();
  close(null_fd);
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(loader_failures.load(), 0) << dlerror();
  EXPECT_EQ(fork_failures.load(), 0);
  EXPECT_GT(window_text, 0u);
  EXPECT_FALSE(Sampler::RecordingState().on);
  Sampler::Reset();  // the freeing hooks stay after deactivation until then
  EXPECT_TRUE(testing::SameButLazyBindings(before, testing::SnapshotSlots()));
  Sampler::Reset();
}

}  // namespace
}  // namespace memprof::agent
