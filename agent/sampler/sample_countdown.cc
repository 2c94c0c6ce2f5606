#include "agent/sampler/sample_countdown.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmath>

namespace memprof::agent {
namespace {

// xorshift64*: 8 bytes of state, a few cycles a draw, good enough for the
// low bits of a gap (jemalloc uses a 64-bit LCG the same way).
uint64_t NextRandom(uint64_t& state) {
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545F4914F6CDD1DULL;
}

// splitmix64's finalizer: spreads close seeds (consecutive thread ids).
uint64_t Mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

void SampleCountdown::Seed(uint64_t seed) {
  rng = Mix(seed);
  if (rng == 0) rng = 0x9E3779B97F4A7C15ULL;  // xorshift's one fixed point
}

int64_t SampleCountdown::NextGap(uint64_t mean) {
  // 53 random bits, +1 so that u is never 0 and log(u) is finite.
  const double u = static_cast<double>((NextRandom(rng) >> 11) + 1) * 0x1.0p-53;
  const double gap = -std::log(u) * static_cast<double>(mean == 0 ? 1 : mean);
  constexpr double kMaxGap = static_cast<double>(int64_t{1} << 62);
  if (gap >= kMaxGap) return int64_t{1} << 62;
  return gap < 1.0 ? 1 : static_cast<int64_t>(gap);
}

bool SampleCountdown::Crossed(uint64_t mean) {
  if (rng == 0) {
    // First allocation of this thread: seed from its id, the time and where
    // its state lives, so that threads started together draw differently.
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const auto tid = static_cast<uint64_t>(syscall(SYS_gettid));
    Seed(tid ^ (static_cast<uint64_t>(now.tv_nsec) << 20) ^ reinterpret_cast<uintptr_t>(this));
    // As if the thread had started with a drawn gap: the bytes counted so
    // far (this allocation) come off it, and may reach it at once.
    bytes_until_sample += NextGap(mean);
    if (bytes_until_sample > 0) return false;
  }
  bytes_until_sample = NextGap(mean);
  return true;
}

}  // namespace memprof::agent
