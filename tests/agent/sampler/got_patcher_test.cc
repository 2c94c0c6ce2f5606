// The sampler's interception end to end: GOT slots of the test executable
// and of dlopen'd libraries patched on activation, put back exactly on
// deactivation, and libraries opened while active patched too.
#include "agent/sampler/got_patcher.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "agent/sampler/sampler.h"
#include "tests/agent/sampler/sampler_test_lib.h"
#include "tests/agent/sampler/sampler_test_support.h"

namespace memprof::agent {
namespace {

using testing::PreloadedTestLib;
using testing::SamplerTestLib;
using testing::SnapshotSlots;
using testing::TestOptions;

// Out of the optimizer's sight, so that malloc(size) is really called.
size_t Opaque(size_t n) {
  volatile size_t v = n;
  return v;
}

class SamplerInterceptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(PreloadedTestLib().handle, nullptr) << dlerror();
    Sampler::Deactivate();
    Sampler::Reset();
  }
  void TearDown() override {
    Sampler::Deactivate();
    Sampler::Reset();
  }
};

TEST_F(SamplerInterceptionTest, SamplesTheLibraryAndTheExecutable) {
  auto& lib = PreloadedTestLib();
  ASSERT_TRUE(testing::ActivateForTest((1)));  // every allocation sampled
  void* a = lib.malloc(1000);
  void* b = lib.calloc(10, 10);
  void* c = lib.memalign(64, 100);
  void* d = std::malloc(Opaque(2000));
  EXPECT_TRUE(Sampler::IsLiveSample(a));
  EXPECT_TRUE(Sampler::IsLiveSample(b));
  EXPECT_TRUE(Sampler::IsLiveSample(c));
  EXPECT_TRUE(Sampler::IsLiveSample(d));
  void* a2 = lib.realloc(a, 100000);
  EXPECT_TRUE(Sampler::IsLiveSample(a2));
  if (a2 != a) {
    EXPECT_FALSE(Sampler::IsLiveSample(a));
  }
  // Addresses kept as numbers: the blocks are gone after the frees.
  const uintptr_t freed[] = {reinterpret_cast<uintptr_t>(a2), reinterpret_cast<uintptr_t>(b),
                             reinterpret_cast<uintptr_t>(c), reinterpret_cast<uintptr_t>(d)};
  lib.free(a2);
  lib.free(b);
  lib.free(c);
  std::free(d);
  for (uintptr_t p : freed) EXPECT_FALSE(Sampler::IsLiveSample(reinterpret_cast<void*>(p)));
  const SamplerStatus status = Sampler::Status();
  EXPECT_TRUE(status.active);
  EXPECT_GT(status.patched_slots, 0u);
  EXPECT_GE(status.patched_modules, 2u);
  EXPECT_FALSE(status.executable_allocator);
  EXPECT_GE(status.samples, 4u);
}

TEST_F(SamplerInterceptionTest, DeactivationRestoresEverySlotExactly) {
  SnapshotSlots();  // binds whatever the snapshot itself calls lazily
  const testing::SlotValues before = SnapshotSlots();
  ASSERT_TRUE(testing::ActivateForTest((512 * 1024)));
  const testing::SlotValues during = SnapshotSlots();
  Sampler::Deactivate();
  Sampler::Reset();  // the freeing hooks stay until the samples go
  const testing::SlotValues after = SnapshotSlots();
  size_t changed = 0;
  for (const auto& [slot, value] : before) changed += during.at(slot) != value ? 1 : 0;
  EXPECT_GT(changed, 4u);
  EXPECT_EQ(after, before);
  EXPECT_EQ(Sampler::Status().patched_slots, 0u);
  // Nothing is sampled any more.
  void* p = PreloadedTestLib().malloc(Opaque(1 << 20));
  EXPECT_FALSE(Sampler::IsLiveSample(p));
  PreloadedTestLib().free(p);
}

TEST_F(SamplerInterceptionTest, FreesOfKeptSamplesAreSeenAfterDeactivation) {
  auto& lib = PreloadedTestLib();
  const testing::SlotValues before = SnapshotSlots();
  ASSERT_TRUE(testing::ActivateForTest(1));
  void* kept = lib.malloc(100);
  ASSERT_TRUE(Sampler::IsLiveSample(kept));
  Sampler::Deactivate();
  EXPECT_FALSE(Sampler::Status().active);
  void* later = lib.malloc(100);  // malloc is back to glibc's: not sampled
  EXPECT_FALSE(Sampler::IsLiveSample(later));
  EXPECT_GT(Sampler::Status().patched_slots, 0u);  // free's slots still hooked
  const auto kept_address = reinterpret_cast<uintptr_t>(kept);
  lib.free(kept);
  EXPECT_FALSE(Sampler::IsLiveSample(reinterpret_cast<void*>(kept_address)));
  lib.free(later);
  Sampler::Reset();
  EXPECT_EQ(Sampler::Status().patched_slots, 0u);
  EXPECT_TRUE(testing::SameButLazyBindings(before, SnapshotSlots()));
}

TEST_F(SamplerInterceptionTest, PatchesALibraryOpenedWhileActive) {
  ASSERT_TRUE(testing::ActivateForTest((1)));
  SamplerTestLib late = SamplerTestLib::Open(MEMPROF_SAMPLER_TESTLIB2);
  ASSERT_NE(late.handle, nullptr) << dlerror();
  void* p = late.malloc(100);
  EXPECT_TRUE(Sampler::IsLiveSample(p));
  late.free(p);
  EXPECT_FALSE(Sampler::IsLiveSample(p));
  // Closed while active, then deactivated: its records are dropped, never
  // written into whatever is mapped there next.
  EXPECT_EQ(dlclose(late.handle), 0);
  Sampler::Deactivate();
  Sampler::Reset();
  EXPECT_EQ(Sampler::Status().patched_slots, 0u);
}

TEST_F(SamplerInterceptionTest, ALibrarysRunpathStillFindsItsPlugins) {
  auto& lib = PreloadedTestLib();
  ASSERT_TRUE(testing::ActivateForTest(512 * 1024));
  // The library's dlopen goes through the hook; the plugin is only in the
  // library's RUNPATH, which the hook's own call would not search.
  void* plugin = lib.dlopen_plugin("libmemprof_sampler_plugin.so");
  ASSERT_NE(plugin, nullptr) << dlerror();
  EXPECT_NE(dlsym(plugin, "SamplerTestPlugin"), nullptr);
  dlclose(plugin);
  // A name found nowhere still fails, with the loader's own message.
  EXPECT_EQ(lib.dlopen_plugin("libmemprof_no_such_plugin.so"), nullptr);
  const char* error = dlerror();
  ASSERT_NE(error, nullptr);
  EXPECT_NE(std::string(error).find("libmemprof_no_such_plugin.so"), std::string::npos) << error;
}

TEST_F(SamplerInterceptionTest, RelroPagesGetTheirProtectionBack) {
  // testlib is linked -z now, so its malloc slot is in a RELRO page.
  const auto perms = [](uintptr_t address) {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
      const uintptr_t start = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
      const uintptr_t end = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
      if (address >= start && address < end) return line.substr(line.find(' ') + 1, 4);
    }
    return std::string("none");
  };
  const testing::SlotValues before = SnapshotSlots();
  uintptr_t* relro_slot = nullptr;
  for (const auto& [slot, value] : before) {
    Dl_info info{};
    if (dladdr(slot, &info) != 0 && std::string(info.dli_fname).find("testlib.so") !=
                                         std::string::npos) {
      if (perms(reinterpret_cast<uintptr_t>(slot)) == "r--p") relro_slot = slot;
    }
  }
  ASSERT_NE(relro_slot, nullptr) << "testlib has no slot in a read-only page";
  const uintptr_t original = *relro_slot;
  ASSERT_TRUE(testing::ActivateForTest((512 * 1024)));
  EXPECT_NE(*relro_slot, original);
  EXPECT_EQ(perms(reinterpret_cast<uintptr_t>(relro_slot)), "r--p");
  Sampler::Deactivate();
  Sampler::Reset();
  EXPECT_EQ(*relro_slot, original);
  EXPECT_EQ(perms(reinterpret_cast<uintptr_t>(relro_slot)), "r--p");
}

TEST_F(SamplerInterceptionTest, ActivateTwiceIsIdempotent) {
  ASSERT_TRUE(testing::ActivateForTest((4096)));
  const size_t patched = Sampler::Status().patched_slots;
  ASSERT_TRUE(testing::ActivateForTest((8192)));
  EXPECT_EQ(Sampler::Status().patched_slots, patched);
  EXPECT_EQ(Sampler::Status().sample_interval, 8192u);
}

void* FakeMalloc(size_t) { return nullptr; }
__attribute__((noinline)) void StandInForAStaticMalloc() { asm volatile(""); }

TEST(GotPatcherTest, SaysWhatItCannotIntercept) {
  // A "malloc" defined in the executable: every module's bound malloc slot
  // holds libc's, another definition, so none is touched (only slots still
  // lazy, which would resolve to the host's definition), and the
  // executable's own calls are said to be out of reach.
  GotPatcher patcher;
  ASSERT_TRUE(patcher.Init(64));
  const HookSpec hooks[] = {{"malloc", reinterpret_cast<uintptr_t>(&FakeMalloc),
                             reinterpret_cast<uintptr_t>(&StandInForAStaticMalloc), false}};
  patcher.Configure(hooks, 1, nullptr, 0);
  patcher.SetEnabled(true);
  patcher.PatchLoaded();
  const PatchReport report = patcher.Report();
  EXPECT_TRUE(report.executable_allocator);
  Dl_info malloc_home{};
  ASSERT_NE(dladdr(dlsym(RTLD_DEFAULT, "malloc"), &malloc_home), 0);
  if (std::string(malloc_home.dli_fname).find("san.so") != std::string::npos) {
    // Under a sanitizer every slot is bound into its runtime, which the
    // patcher skips as one of its own kind: no note to check.
    EXPECT_EQ(patcher.RestoreAll(), report.slots_patched);
    return;
  }
  EXPECT_GT(report.slots_foreign, 0u);
  ASSERT_GT(report.note_count, 0);
  EXPECT_NE(std::string(report.notes[0]).find("malloc is bound to another definition"),
            std::string::npos)
      << report.notes[0];
  EXPECT_EQ(patcher.RestoreAll(), report.slots_patched);
}

TEST(GotPatcherTest, DisabledPatcherPatchesNothing) {
  // As a hooked dlopen that returns after deactivation: no hook comes back.
  GotPatcher patcher;
  ASSERT_TRUE(patcher.Init(64));
  const uintptr_t libc_malloc = reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "malloc"));
  const HookSpec hooks[] = {{"malloc", reinterpret_cast<uintptr_t>(&FakeMalloc), libc_malloc,
                             false}};
  patcher.Configure(hooks, 1, nullptr, 0);
  patcher.PatchLoaded();
  EXPECT_EQ(patcher.patched(), 0u);
  patcher.SetEnabled(true);
  patcher.SetEnabled(false);
  patcher.PatchLoaded();
  EXPECT_EQ(patcher.patched(), 0u);
}

TEST(GotPatcherTest, SlotsBoundIntoASkippedModuleAreLeftAloneSilently) {
  // As libgrpc's slots bound to the agent's deep-bound forwarding malloc:
  // here libc plays the agent's module (skipped), its malloc the forwarder.
  GotPatcher patcher;
  ASSERT_TRUE(patcher.Init(64));
  const HookSpec hooks[] = {{"malloc", reinterpret_cast<uintptr_t>(&FakeMalloc),
                             reinterpret_cast<uintptr_t>(&StandInForAStaticMalloc), false}};
  const uintptr_t libc_malloc = reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "malloc"));
  patcher.Configure(hooks, 1, &libc_malloc, 1);
  patcher.SetEnabled(true);
  patcher.PatchLoaded();
  const PatchReport report = patcher.Report();
  EXPECT_EQ(report.slots_foreign, 0u);
  EXPECT_EQ(report.note_count, 0);
  EXPECT_EQ(patcher.RestoreAll(), report.slots_patched);
}

}  // namespace
}  // namespace memprof::agent
