// sampler_target: a C++ service for memprof's own sampler (agent/sampler),
// on whichever allocator serves malloc: glibc's when nothing is preloaded,
// or jemalloc without prof:true, tcmalloc_minimal or mimalloc, preloaded by
// the test. It links no allocator and no agent.
//
// Before it says it is ready, it fills a cache of 16 MiB through operator
// new (FillCacheBeforeActivation): memprof's sampler, switched on later,
// must leave it out. Then it answers commands, one per line on stdin, with
// one line on stdout:
//   leak KIB    LeakThroughNew keeps KIB KiB more, in blocks of 1 to 16 KiB
//               through operator new[]; answers "leaked <bytes>", the total
//               this program has leaked so far (its own count)
//   churn N     ChurnThroughMalloc makes N short-lived blocks of 256 bytes
//               to 8 KiB (malloc, realloc, free): "churned <N>"
// Runs until EOF on stdin or SIGTERM/SIGINT.
#include <errno.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/testprogs/line_server.h"
#include "tests/testprogs/testprog_support.h"

namespace {

constexpr size_t kCacheBytes = 16u << 20;
constexpr size_t kCacheBlock = 4096;

std::vector<char*>* cache;   // filled before activation, kept
std::vector<char*>* leaked;  // never freed
uint64_t leaked_bytes = 0;
uint32_t rng = 2463534242u;

uint32_t Next() {
  rng ^= rng << 13;
  rng ^= rng >> 17;
  rng ^= rng << 5;
  return rng;
}

__attribute__((noinline)) void FillCacheBeforeActivation() {
  cache = new std::vector<char*>;
  for (size_t filled = 0; filled < kCacheBytes; filled += kCacheBlock) {
    char* block = new char[kCacheBlock];
    std::memset(block, 1, kCacheBlock);
    cache->push_back(block);
  }
}

__attribute__((noinline)) void LeakThroughNew(uint64_t kib) {
  const uint64_t goal = leaked_bytes + kib * 1024;
  while (leaked_bytes < goal) {
    const size_t size = 1024 + Next() % (15 * 1024);
    char* block = new char[size];
    block[0] = 1;
    leaked->push_back(block);
    leaked_bytes += size;
  }
}

__attribute__((noinline)) void ChurnThroughMalloc(uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    void* block = std::malloc(256 + Next() % 4096);
    if (block == nullptr) std::abort();
    static_cast<char*>(block)[0] = 1;
    void* bigger = std::realloc(block, 4096 + Next() % 4096);
    if (bigger == nullptr) std::abort();
    std::free(bigger);
  }
}

// One command; false when the line is not one.
bool Serve(const char* line) {
  char reply[64];
  unsigned long long n = 0;
  if (std::sscanf(line, "leak %llu", &n) == 1) {
    LeakThroughNew(n);
    std::snprintf(reply, sizeof reply, "leaked %llu\n",
                  static_cast<unsigned long long>(leaked_bytes));
  } else if (std::sscanf(line, "churn %llu", &n) == 1) {
    ChurnThroughMalloc(n);
    std::snprintf(reply, sizeof reply, "churned %llu\n", n);
  } else {
    return false;
  }
  return LineWrite(STDOUT_FILENO, reply) == 0;
}

}  // namespace

int main() {
  if (TestProgInstallStopHandlers() != 0) return 1;
  leaked = new std::vector<char*>;
  leaked->reserve(1u << 20);
  FillCacheBeforeActivation();
  if (TestProgSignalReady("sampler_target") != 0) return 1;
  char line[64];
  while (!TestProgStopRequested()) {
    const int n = LineRead(STDIN_FILENO, line, sizeof line);
    if (n == 0) break;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return 1;
    if (!Serve(line)) {
      std::fprintf(stderr, "sampler_target: unknown command '%s'\n", line);
      return 1;
    }
  }
  return 0;
}
