// Not a test: what the sampler's hooks cost the host (docs/performance.md).
//   sampler_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
// BM_MallocFree/hooks:0 is malloc(64)+free from the executable straight to
// glibc; /hooks:1 the same through the sampler's GOT hooks at the default
// interval (512 KiB), the sampler in a dlopen'd object as in the agent's
// module. BM_ChurnManyLiveBlocks is the same over a large heap (random
// frees). BM_SampledMallocFree samples every call (interval 1): the stack
// and the tables. BM_CaptureStack is the unwinder alone.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

struct BenchLib {
  bool (*activate)(uint64_t) = nullptr;
  void (*deactivate)() = nullptr;
  uint64_t (*samples)() = nullptr;
  int (*capture)(uintptr_t*, int) = nullptr;
};

const BenchLib& Lib() {
  static const BenchLib lib = [] {
    BenchLib l;
    void* h = dlopen(MEMPROF_SAMPLER_BENCHLIB, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      std::fprintf(stderr, "%s\n", dlerror());
      std::abort();
    }
    l.activate = reinterpret_cast<bool (*)(uint64_t)>(dlsym(h, "BenchSamplerActivate"));
    l.deactivate = reinterpret_cast<void (*)()>(dlsym(h, "BenchSamplerDeactivate"));
    l.samples = reinterpret_cast<uint64_t (*)()>(dlsym(h, "BenchSamplerSamples"));
    l.capture = reinterpret_cast<int (*)(uintptr_t*, int)>(dlsym(h, "BenchCaptureStack"));
    return l;
  }();
  return lib;
}

void MallocFreeLoop(benchmark::State& state) {
  size_t size = 64;
  for (auto _ : state) {
    benchmark::DoNotOptimize(size);
    void* p = std::malloc(size);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}

void BM_MallocFree(benchmark::State& state) {
  const bool hooks = state.range(0) != 0;
  if (hooks && !Lib().activate(512 * 1024)) state.SkipWithError("activation failed");
  MallocFreeLoop(state);
  if (hooks) {
    state.counters["samples"] = static_cast<double>(Lib().samples());
    Lib().deactivate();
  }
}
BENCHMARK(BM_MallocFree)->ArgName("hooks")->Arg(0)->Arg(1);

// A host's heap, not one hot block: 256 Ki live blocks of 16 to 1 KiB, and
// each iteration frees a random one and allocates its replacement, so that
// every free asks the live table about an address far from the last.
void BM_ChurnManyLiveBlocks(benchmark::State& state) {
  const bool hooks = state.range(0) != 0;
  constexpr size_t kBlocks = size_t{1} << 18;
  static void* blocks[kBlocks];
  for (void*& b : blocks) b = std::malloc(16);
  if (hooks && !Lib().activate(512 * 1024)) state.SkipWithError("activation failed");
  uint64_t rng = 88172645463325252ull;
  for (auto _ : state) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    const size_t i = rng % kBlocks;
    std::free(blocks[i]);
    blocks[i] = std::malloc(16 + (rng >> 32) % 1008);
    benchmark::DoNotOptimize(blocks[i]);
  }
  if (hooks) Lib().deactivate();
  for (void*& b : blocks) std::free(b);
}
BENCHMARK(BM_ChurnManyLiveBlocks)->ArgName("hooks")->Arg(0)->Arg(1);

void BM_SampledMallocFree(benchmark::State& state) {
  if (!Lib().activate(1)) state.SkipWithError("activation failed");
  MallocFreeLoop(state);
  Lib().deactivate();
}
BENCHMARK(BM_SampledMallocFree);

__attribute__((noinline)) int Nest(int depth, uintptr_t* frames) {
  if (depth == 0) return Lib().capture(frames, 64);
  const int n = Nest(depth - 1, frames);
  benchmark::DoNotOptimize(n);
  return n;
}

void BM_CaptureStack(benchmark::State& state) {
  uintptr_t frames[64];
  for (auto _ : state) benchmark::DoNotOptimize(Nest(static_cast<int>(state.range(0)), frames));
  state.counters["frames"] = Nest(static_cast<int>(state.range(0)), frames);
}
BENCHMARK(BM_CaptureStack)->ArgName("nest")->Arg(0)->Arg(10)->Arg(30);

}  // namespace

BENCHMARK_MAIN();
