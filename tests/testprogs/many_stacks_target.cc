// many_stacks_target: a C++ program, linked with jemalloc, that allocates from
// a configurable number of distinct call stacks and keeps every allocation
// alive. Stack i descends through ManyStacksBranch0 / ManyStacksBranch1 chosen
// by the bits of i, so N stacks need ceil(log2(N)) levels and every path is a
// distinct sequence of return addresses. With MALLOC_CONF=prof:true,
// prof_active:true,lg_prof_sample:0 each stack becomes one record of the
// heap_v2 dump, which is how the tests make a dump of 100 MB and more.
//
// Usage: many_stacks_target [--stacks N] [--pad-frames N] [--allocs-per-stack N]
//                           [--bytes N] [--self-dump PATH] [--dump-requests FIFO]
//                           [--once]
// The number of stacks defaults to $MEMPROF_TEST_STACKS, else 10000.
// --pad-frames N adds N shared frames (ManyStacksPad) above every stack: the
// dump grows by about 15 bytes per frame per stack while the target's memory
// does not, since jemalloc's cost is per sampled allocation (each sampled small
// allocation is promoted to a 16 KiB size class).
// --self-dump PATH calls mallctl("prof.dump") itself once the allocations are
// done and prints the elapsed time on stderr (the benchmarks' anchor).
// --dump-requests FIFO (with --self-dump) then reads paths from FIFO, one per
// line, and dumps to each the same way, so a benchmark can interleave the
// anchor with `memprofctl dump` on one heap (tests/bench/speed.py).
// --once exits after that instead of running until SIGTERM/SIGINT.

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "tests/testprogs/testprog_support.h"

namespace {

constexpr std::size_t kDefaultStacks = 10000;
constexpr std::size_t kMaxStacks = std::size_t{1} << 24;
constexpr std::size_t kMaxAllocations = std::size_t{1} << 26;
constexpr std::size_t kMaxPadFrames = 96;  // jemalloc keeps at most 128 frames per stack.
constexpr int kWaitMillis = 200;

struct Options {
  std::size_t stacks = kDefaultStacks;
  std::size_t pad_frames = 0;
  std::size_t allocs_per_stack = 1;
  std::size_t bytes = 64;
  std::string self_dump;
  std::string dump_requests;
  bool once = false;
};

struct Workload {
  std::size_t allocs_per_stack = 1;
  std::size_t bytes = 64;
  std::vector<void*> blocks;  // Reserved up front: no growth inside the stacks.
  bool out_of_memory = false;
};

Workload g_workload;
std::size_t g_branch_visits[2] = {0, 0};
std::size_t g_pad_visits = 0;

}  // namespace

// The allocating leaf every stack ends in.
__attribute__((noinline)) void ManyStacksAllocate() {
  for (std::size_t i = 0; i < g_workload.allocs_per_stack; ++i) {
    void* block = std::malloc(g_workload.bytes);
    if (block == nullptr) {
      g_workload.out_of_memory = true;
      return;
    }
    std::memset(block, 0x5a, g_workload.bytes);
    g_workload.blocks.push_back(block);
  }
}

void ManyStacksBranch0(std::uint64_t path, int level);
void ManyStacksBranch1(std::uint64_t path, int level);

namespace {

// Takes the branch named by bit `level - 1` of `path`; allocates at level 0.
inline void Descend(std::uint64_t path, int level) {
  if (level == 0) {
    ManyStacksAllocate();
  } else if (((path >> (level - 1)) & 1U) != 0) {
    ManyStacksBranch1(path, level - 1);
  } else {
    ManyStacksBranch0(path, level - 1);
  }
}

}  // namespace

// The counter update after the call keeps the call a real call (no sibling
// call), so the frame stays on the stack, and keeps the two bodies distinct.
__attribute__((noinline)) void ManyStacksBranch0(std::uint64_t path, int level) {
  Descend(path, level);
  ++g_branch_visits[0];
}

__attribute__((noinline)) void ManyStacksBranch1(std::uint64_t path, int level) {
  Descend(path, level);
  ++g_branch_visits[1];
}

// Adds `pad` frames of itself before descending; see --pad-frames.
__attribute__((noinline)) void ManyStacksPad(int pad, std::uint64_t path, int depth) {
  if (pad == 0) {
    Descend(path, depth);
  } else {
    ManyStacksPad(pad - 1, path, depth);
  }
  ++g_pad_visits;
}

namespace {

// Accepts a decimal number in [min, max].
bool ParseCount(const char* text, std::size_t min, std::size_t max, std::size_t* out) {
  char* end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || *text == '-') return false;
  if (value < min || value > max) return false;
  *out = static_cast<std::size_t>(value);
  return true;
}

bool ParseOption(std::string_view flag, const char* value, Options* options) {
  if (flag == "--stacks") return ParseCount(value, 1, kMaxStacks, &options->stacks);
  if (flag == "--pad-frames") return ParseCount(value, 0, kMaxPadFrames, &options->pad_frames);
  if (flag == "--allocs-per-stack") return ParseCount(value, 1, 1024, &options->allocs_per_stack);
  if (flag == "--bytes") return ParseCount(value, 1, std::size_t{1} << 20, &options->bytes);
  if (flag == "--dump-requests") {
    options->dump_requests = value;
    return !options->dump_requests.empty();
  }
  if (flag == "--self-dump") {
    options->self_dump = value;
    return !options->self_dump.empty();
  }
  return false;
}

bool ParseArgs(int argc, char** argv, Options* options) {
  if (const char* env = std::getenv("MEMPROF_TEST_STACKS"); env != nullptr) {
    if (!ParseCount(env, 1, kMaxStacks, &options->stacks)) return false;
  }
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (flag == "--once") {
      options->once = true;
    } else if (i + 1 >= argc || !ParseOption(flag, argv[i + 1], options)) {
      return false;
    } else {
      ++i;
    }
  }
  return options->stacks * options->allocs_per_stack <= kMaxAllocations;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool BuildStacks(const Options& options) {
  g_workload.allocs_per_stack = options.allocs_per_stack;
  g_workload.bytes = options.bytes;
  g_workload.blocks.reserve(options.stacks * options.allocs_per_stack);
  int depth = std::max(1, static_cast<int>(std::bit_width(options.stacks - 1)));
  int pad = static_cast<int>(options.pad_frames);
  for (std::uint64_t path = 0; path < options.stacks && !g_workload.out_of_memory; ++path) {
    ManyStacksPad(pad, path, depth);
  }
  return !g_workload.out_of_memory;
}

using MallctlFn = int (*)(const char*, void*, std::size_t*, void*, std::size_t);

// Resolved at run time so the same code works with jemalloc linked or preloaded.
MallctlFn FindMallctl() { return reinterpret_cast<MallctlFn>(dlsym(RTLD_DEFAULT, "mallctl")); }

bool ProfilingActive(MallctlFn mallctl) {
  bool active = false;
  std::size_t size = sizeof(active);
  return mallctl("prof.active", &active, &size, nullptr, 0) == 0 && active;
}

// The profiling checks --self-dump needs, done before the (slow) setup.
MallctlFn ProfilingMallctl() {
  MallctlFn mallctl = FindMallctl();
  if (mallctl == nullptr || !ProfilingActive(mallctl)) {
    std::fprintf(stderr,
                 "many_stacks_target: --self-dump needs jemalloc with "
                 "MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0\n");
    return nullptr;
  }
  return mallctl;
}

bool SelfDump(MallctlFn mallctl, const std::string& path) {
  const char* file = path.c_str();
  auto start = std::chrono::steady_clock::now();
  int rc = mallctl("prof.dump", nullptr, nullptr, &file, sizeof(file));
  double seconds = SecondsSince(start);
  struct stat info {};
  if (rc != 0 || stat(file, &info) != 0) {
    std::fprintf(stderr, "many_stacks_target: mallctl(\"prof.dump\") to %s failed (error %d)\n",
                 file, rc);
    return false;
  }
  std::fprintf(stderr, "many_stacks_target: prof.dump wrote %lld bytes to %s in %.3f s\n",
               static_cast<long long>(info.st_size), file, seconds);
  return true;
}

bool Setup(const Options& options) {
  MallctlFn mallctl = nullptr;
  if (!options.self_dump.empty() && (mallctl = ProfilingMallctl()) == nullptr) return false;
  auto start = std::chrono::steady_clock::now();
  if (!BuildStacks(options)) {
    std::fprintf(stderr, "many_stacks_target: out of memory\n");
    return false;
  }
  if (mallctl == nullptr) return true;
  std::fprintf(stderr,
               "many_stacks_target: %zu stacks (+%zu pad frames) x %zu allocations of %zu bytes "
               "in %.3f s\n",
               options.stacks, options.pad_frames, options.allocs_per_stack, options.bytes,
               SecondsSince(start));
  return SelfDump(mallctl, options.self_dump);
}

// Serves --dump-requests until a stop signal: one prof.dump per line read.
void ServeDumpRequests(const std::string& fifo) {
  MallctlFn mallctl = FindMallctl();
  while (!TestProgStopRequested()) {
    std::FILE* requests = std::fopen(fifo.c_str(), "r");  // waits for a writer
    if (requests == nullptr) return;
    char line[4096];
    while (std::fgets(line, sizeof(line), requests) != nullptr) {
      std::string path(line);
      while (!path.empty() && path.back() == '\n') path.pop_back();
      if (!path.empty()) SelfDump(mallctl, path);
    }
    std::fclose(requests);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseArgs(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: many_stacks_target [--stacks N] [--pad-frames N] [--allocs-per-stack N] "
                 "[--bytes N] [--self-dump PATH] [--dump-requests FIFO] [--once]\n");
    return 2;
  }
  if (TestProgInstallStopHandlers() != 0 || !Setup(options)) return 1;
  if (TestProgSignalReady("many_stacks_target") != 0) return 1;
  if (!options.dump_requests.empty() && !options.self_dump.empty()) {
    ServeDumpRequests(options.dump_requests);
  }
  // The blocks stay allocated until exit, so a prof_final dump still sees them.
  while (!options.once && !TestProgStopRequested()) TestProgSleepMillis(kWaitMillis);
  return 0;
}
