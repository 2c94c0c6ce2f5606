#ifndef MEMPROF_AGENT_SAMPLER_SAMPLER_STATE_H_
#define MEMPROF_AGENT_SAMPLER_SAMPLER_STATE_H_

#include <pthread.h>

#include <atomic>
#include <cstdint>

#include "agent/sampler/got_patcher.h"
#include "agent/sampler/live_table.h"
#include "agent/sampler/recent_ring.h"
#include "agent/sampler/stack_table.h"

namespace memprof::agent {

inline constexpr uint64_t kDefaultSampleInterval = 512 * 1024;

// Everything the hooks touch, process-wide. Made once, at the first
// activation, and never destroyed: a thread may be inside a hook at any time
// after that, even long after deactivation, and at exit.
//
// Lock order: Sampler's control lock, then patcher's, then sample_mu.
struct SamplerState {
  LiveTable live;
  StackTable stacks;
  RecentRing recent;  // an open allocation window's records; under sample_mu
  GotPatcher patcher;
  // Taken on sampled allocations only (to intern the stack) and by dumps;
  // never while calling anything that could allocate or take another lock.
  pthread_mutex_t sample_mu = PTHREAD_MUTEX_INITIALIZER;
  std::atomic<uint64_t> interval{kDefaultSampleInterval};
  std::atomic<bool> sampling{false};  // read on sampled calls only
  // An allocation window is open: samples and their frees go to `recent`
  // too. Read on sampled calls, outside the lock (the ring decides inside).
  std::atomic<bool> recording{false};
  std::atomic<uint64_t> samples{0};
  std::atomic<uint64_t> agent_thread_skips{0};
  // When the samples held began: the first activation since the last reset
  // (Unix ms; 0 = none yet). Profiles say so ("# memprof_sampler").
  std::atomic<int64_t> since_unix_ms{0};
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SAMPLER_SAMPLER_STATE_H_
