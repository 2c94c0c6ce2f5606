// linked_target: a C++ program linked with jemalloc and libmemprof_agent.so
// that starts the agent itself with memprof_agent_start(), as an application
// embedding memprof would. It retains 64 KiB blocks in a bounded ring
// (LinkedTargetAllocate) and leaks 4 KiB every tick (LinkedTargetLeak), until
// SIGTERM/SIGINT.

#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "memprof/agent.h"
#include "tests/testprogs/testprog_support.h"

namespace {

constexpr std::size_t kBlockBytes = 64 * 1024;
constexpr std::size_t kRingSlots = 64;  // 4 MiB retained at any time.
constexpr int kBlocksPerTick = 4;
constexpr std::size_t kLeakBytes = 4 * 1024;
constexpr std::size_t kLeakCapBytes = 64 * 1024 * 1024;
constexpr int kTickMillis = 10;

struct LeakNode {
  LeakNode* next;
};

std::array<void*, kRingSlots> g_ring{};
std::size_t g_ring_next = 0;
LeakNode* g_leaked = nullptr;
std::size_t g_leaked_bytes = 0;

}  // namespace

// Both functions call malloc themselves rather than `new`: Debian's
// libjemalloc.so.2 is stripped, and jeprof names its internal operator-new
// frames after the nearest exported symbol (malloc_usable_size), which would
// take the flat column away from these functions.

// Replaces the oldest ring slot with a fresh, touched block.
__attribute__((noinline)) bool LinkedTargetAllocate() {
  void* block = std::malloc(kBlockBytes);
  if (block == nullptr) return false;
  std::memset(block, 0x5a, kBlockBytes);
  std::free(g_ring[g_ring_next]);
  g_ring[g_ring_next] = block;
  g_ring_next = (g_ring_next + 1) % kRingSlots;
  return true;
}

namespace {

// Lets go of everything "leaked" so far; see LinkedTargetLeak.
void ReleaseLeaked() {
  while (g_leaked != nullptr) {
    LeakNode* next = g_leaked->next;
    std::free(g_leaked);
    g_leaked = next;
  }
  g_leaked_bytes = 0;
}

}  // namespace

// Never frees: the steadily growing "leak" the tests can look for. So that a
// forgotten process cannot eat the machine, the leak starts over at 64 MiB
// (about 160 s) instead of stopping, and this function never stops allocating.
__attribute__((noinline)) bool LinkedTargetLeak() {
  if (g_leaked_bytes >= kLeakCapBytes) ReleaseLeaked();
  void* memory = std::malloc(kLeakBytes);
  if (memory == nullptr) return false;
  std::memset(memory, 0xa5, kLeakBytes);
  g_leaked = new (memory) LeakNode{g_leaked};
  g_leaked_bytes += kLeakBytes;
  return true;
}

namespace {

bool Tick() {
  for (int i = 0; i < kBlocksPerTick; ++i) {
    if (!LinkedTargetAllocate()) return false;
  }
  return LinkedTargetLeak();
}

bool FillRing() {
  for (std::size_t i = 0; i < kRingSlots; ++i) {
    if (!LinkedTargetAllocate()) return false;
  }
  return LinkedTargetLeak();
}

}  // namespace

int main() {
  if (TestProgInstallStopHandlers() != 0) return 1;
  if (int rc = memprof_agent_start(); rc < 0) {
    std::fprintf(stderr, "linked_target: memprof_agent_start() failed (%d)\n", rc);
    return 1;
  }
  int status = 0;
  if (!FillRing() || TestProgSignalReady("linked_target") != 0) status = 1;
  while (status == 0 && !TestProgStopRequested()) {
    if (!Tick()) {
      std::fprintf(stderr, "linked_target: out of memory\n");
      status = 1;
    }
    TestProgSleepMillis(kTickMillis);
  }
  memprof_agent_stop();
  return status;
}
