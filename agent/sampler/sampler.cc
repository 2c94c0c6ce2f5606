#include "agent/sampler/sampler.h"

#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include "agent/sampler/heap_v2_writer.h"
#include "agent/sampler/recent_json_writer.h"
#include "agent/sampler/sampler_hooks.h"
#include "agent/sampler/stack_capture.h"
#include "common/duration.h"

namespace memprof::agent {
namespace {

// Activation, deactivation and reset, one at a time.
pthread_mutex_t control_mu = PTHREAD_MUTEX_INITIALIZER;
SamplerState* state = nullptr;  // guarded by control_mu; never freed
bool active = false;            // guarded by control_mu
constexpr size_t kMaxPatchedSlots = 16384;

// The state lives in static storage, built in place: no host allocation,
// and no destructor to run at exit while another thread is in a hook.
alignas(SamplerState) unsigned char state_storage[sizeof(SamplerState)];

Result<SamplerState*> MakeState(const SamplerOptions& options) {
  auto* s = new (state_storage) SamplerState();
  if (!s->live.Init(options.max_live_samples) || !s->stacks.Init(options.max_stacks) ||
      !s->patcher.Init(kMaxPatchedSlots)) {
    s->~SamplerState();
    return Fail(ErrorCode::kResourceExhausted,
                "memprof's sampler could not map its tables (mmap failed)");
  }
  return s;
}

void ConfigurePatcher(SamplerState& s, bool skip_own_module) {
  size_t count = 0;
  const HookSpec* hooks = SamplerHooks(&count);
  const uintptr_t own[] = {reinterpret_cast<uintptr_t>(&MakeState)};
  s.patcher.Configure(hooks, count, own, skip_own_module ? 1 : 0);
}

// Makes the state at the first use; under control_mu.
Result<void> EnsureStateLocked(const SamplerOptions& options) {
  if (state != nullptr) return {};
  auto made = MakeState(options);
  if (!made) return Fail(made.error());
  state = *made;
  return {};
}

}  // namespace

Result<void> Sampler::Activate(const SamplerOptions& options) {
  NotSampledByMemprof quiet;
  pthread_mutex_lock(&control_mu);
  if (auto made = EnsureStateLocked(options); !made) {
    pthread_mutex_unlock(&control_mu);
    return Fail(made.error());
  }
  state->interval.store(options.sample_interval == 0 ? 1 : options.sample_interval,
                        std::memory_order_relaxed);
  if (!active) {
    // Everything a hook may call is bound before the first slot points at it.
    PrepareStackCapture();
    (void)OnAgentThread();
    ResolveHostFunctions();
    InstallSamplerState(state);
    ConfigurePatcher(*state, options.skip_own_module);
    if (state->since_unix_ms.load(std::memory_order_relaxed) == 0) {
      state->since_unix_ms.store(NowUnixMs(), std::memory_order_relaxed);
    }
    state->sampling.store(true, std::memory_order_relaxed);
    state->patcher.SetEnabled(true);
    state->patcher.PatchLoaded();
    active = true;
  }
  pthread_mutex_unlock(&control_mu);
  return {};
}

void Sampler::Deactivate() {
  NotSampledByMemprof quiet;
  pthread_mutex_lock(&control_mu);
  if (active) {
    state->sampling.store(false, std::memory_order_relaxed);
    state->patcher.SetEnabled(false);
    // The samples are kept, so frees of them must still be seen: the hooks
    // that free stay while any sample lives, until Reset.
    state->patcher.Restore(/*keep_frees=*/state->live.live() > 0);
    active = false;
  }
  pthread_mutex_unlock(&control_mu);
}

void Sampler::Reset() {
  NotSampledByMemprof quiet;
  pthread_mutex_lock(&control_mu);
  if (state != nullptr) {
    pthread_mutex_lock(&state->sample_mu);
    state->live.Clear();
    state->stacks.Clear();
    state->samples.store(0, std::memory_order_relaxed);
    state->agent_thread_skips.store(0, std::memory_order_relaxed);
    state->since_unix_ms.store(active ? NowUnixMs() : 0, std::memory_order_relaxed);
    state->recent.Restart();  // its records name the stacks just dropped
    pthread_mutex_unlock(&state->sample_mu);
    // No sample left to follow: a deactivated sampler lets go of the rest.
    if (!active) state->patcher.RestoreAll();
  }
  pthread_mutex_unlock(&control_mu);
}

Result<uint64_t> Sampler::WriteProfile(int fd) {
  NotSampledByMemprof quiet;
  pthread_mutex_lock(&control_mu);
  SamplerState* s = state;
  pthread_mutex_unlock(&control_mu);
  if (s == nullptr) {
    return Fail(ErrorCode::kFailedPrecondition,
                "memprof's sampler has not been activated in this process; run `memprofctl "
                "activate` first");
  }
  MappedRegion scratch = MappedRegion::Map(s->stacks.capacity() * sizeof(StackTotals));
  if (scratch.empty()) return Fail(ErrorCode::kResourceExhausted, "mmap failed for the dump");
  TextWriter writer(fd);
  pthread_mutex_lock(&s->sample_mu);
  const ProfileCoverage coverage{s->since_unix_ms.load(std::memory_order_relaxed),
                                 s->live.overflows() + s->stacks.overflows()};
  bool ok = WriteHeapV2(writer, s->interval.load(std::memory_order_relaxed), coverage, s->live,
                        s->stacks, static_cast<StackTotals*>(scratch.data()));
  pthread_mutex_unlock(&s->sample_mu);
  ok = ok && WriteMappedLibraries(writer);
  if (!ok) {
    return Fail(ErrorCode::kInternal,
                std::string("writing the heap profile failed: ") +
                    std::strerror(writer.error() != 0 ? writer.error() : EIO));
  }
  return writer.written();
}

Result<void> Sampler::BeginRecording(size_t capacity) {
  NotSampledByMemprof quiet;
  pthread_mutex_lock(&control_mu);
  Result<void> result = EnsureStateLocked(SamplerOptions{});
  if (result) {
    pthread_mutex_lock(&state->sample_mu);
    if (state->recent.recording()) {
      result =
          Fail(ErrorCode::kFailedPrecondition, "memprof's sampler is recording a window already");
    } else if (!state->recent.Begin(capacity)) {
      result = Fail(ErrorCode::kResourceExhausted, "memprof's sampler could not map the window's " +
                                                       std::to_string(capacity) +
                                                       " records (mmap failed)");
    } else {
      state->recording.store(true, std::memory_order_relaxed);
    }
    pthread_mutex_unlock(&state->sample_mu);
  }
  pthread_mutex_unlock(&control_mu);
  return result;
}

void Sampler::EndRecording() {
  NotSampledByMemprof quiet;
  pthread_mutex_lock(&control_mu);
  if (state != nullptr) {
    pthread_mutex_lock(&state->sample_mu);
    state->recording.store(false, std::memory_order_relaxed);
    state->recent.End();
    pthread_mutex_unlock(&state->sample_mu);
  }
  pthread_mutex_unlock(&control_mu);
}

Sampler::Recording Sampler::RecordingState() {
  Recording out;
  pthread_mutex_lock(&control_mu);
  if (state != nullptr) {
    pthread_mutex_lock(&state->sample_mu);
    out.on = state->recent.recording();
    out.records = state->recent.count();
    out.lost = state->recent.lost();
    pthread_mutex_unlock(&state->sample_mu);
  }
  pthread_mutex_unlock(&control_mu);
  return out;
}

// The records are copied under the sample lock, which sampled allocations
// wait for, and written out after it, under the control lock only: a reset
// (which drops the stacks they name) waits for the write, the host's
// threads do not.
Result<void> Sampler::WriteRecentAllocations(TextSink sink, void* opaque) {
  NotSampledByMemprof quiet;
  pthread_mutex_lock(&control_mu);
  if (state == nullptr || !state->recent.recording()) {
    pthread_mutex_unlock(&control_mu);
    return Fail(ErrorCode::kFailedPrecondition, "memprof's sampler records no window");
  }
  MappedRegion scratch = MappedRegion::Map(state->recent.capacity() * sizeof(RecentRecord));
  if (scratch.empty()) {
    pthread_mutex_unlock(&control_mu);
    return Fail(ErrorCode::kResourceExhausted, "mmap failed for the window's records");
  }
  auto* records = static_cast<RecentRecord*>(scratch.data());
  pthread_mutex_lock(&state->sample_mu);
  const uint64_t count = state->recent.CopyOut(records);
  const uint64_t bound = state->recent.capacity();
  pthread_mutex_unlock(&state->sample_mu);
  TextWriter writer(sink, opaque);
  WriteRecentJson(writer, state->interval.load(std::memory_order_relaxed), bound, records, count,
                  state->stacks);
  writer.Flush();
  pthread_mutex_unlock(&control_mu);
  return {};
}

Result<void> Sampler::RegisterForkHandlers() {
  if (pthread_atfork(&Sampler::PrepareFork, &Sampler::AfterForkInParent,
                     &Sampler::AfterForkInChild) != 0) {
    return Fail(ErrorCode::kResourceExhausted, "pthread_atfork failed");
  }
  return {};
}

// The child's copy of the tables is the parent's at the instant of fork().
void Sampler::PrepareFork() {
  pthread_mutex_lock(&control_mu);
  if (state != nullptr) {
    state->patcher.LockForFork();
    pthread_mutex_lock(&state->sample_mu);
  }
}

void Sampler::AfterForkInParent() {
  if (state != nullptr) {
    pthread_mutex_unlock(&state->sample_mu);
    state->patcher.UnlockAfterFork(false);
  }
  pthread_mutex_unlock(&control_mu);
}

void Sampler::AfterForkInChild() {
  if (state != nullptr) {
    pthread_mutex_init(&state->sample_mu, nullptr);
    state->patcher.UnlockAfterFork(true);
    // The window is the parent's: its agent ends it and fetches it.
    state->recording.store(false, std::memory_order_relaxed);
    state->recent.End();
  }
  pthread_mutex_init(&control_mu, nullptr);
}

bool Sampler::IsLiveSample(const void* p) {
  pthread_mutex_lock(&control_mu);
  SamplerState* s = state;
  pthread_mutex_unlock(&control_mu);
  return s != nullptr && s->live.Contains(reinterpret_cast<uintptr_t>(p));
}

SamplerStatus Sampler::Status() {
  SamplerStatus out;
  pthread_mutex_lock(&control_mu);
  SamplerState* s = state;
  out.active = active;
  pthread_mutex_unlock(&control_mu);
  if (s == nullptr) return out;
  out.sample_interval = s->interval.load(std::memory_order_relaxed);
  out.since_unix_ms = s->since_unix_ms.load(std::memory_order_relaxed);
  out.samples = s->samples.load(std::memory_order_relaxed);
  out.live_samples = s->live.live();
  out.live_overflows = s->live.overflows();
  pthread_mutex_lock(&s->sample_mu);
  out.stack_overflows = s->stacks.overflows();
  out.stacks = s->stacks.size();
  pthread_mutex_unlock(&s->sample_mu);
  out.agent_thread_skips = s->agent_thread_skips.load(std::memory_order_relaxed);
  out.patched_slots = s->patcher.patched();
  const PatchReport report = s->patcher.Report();
  out.patched_modules = report.modules_patched;
  out.executable_allocator = report.executable_allocator;
  for (int i = 0; i < report.note_count; ++i) out.not_intercepted.emplace_back(report.notes[i]);
  if (report.executable_allocator) {
    out.not_intercepted.emplace_back(
        "the executable defines malloc itself (a static allocator): its own calls do not go "
        "through a GOT and are not sampled");
  }
  return out;
}

}  // namespace memprof::agent
