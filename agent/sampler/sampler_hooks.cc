#include "agent/sampler/sampler_hooks.h"

#include <dlfcn.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <new>

#include "agent/sampler/dlopen_search.h"
#include "agent/sampler/sample_countdown.h"
#include "agent/sampler/stack_capture.h"
#include "agent/shared/host_symbols.h"

namespace memprof::agent {
namespace {

// Per thread, zero-initialized (no constructor, no destructor, so no TLS
// wrapper and nothing to run at thread exit).
struct ThreadState {
  SampleCountdown countdown;
  bool busy = false;  // inside the sampler: nothing it allocates is sampled
};
constinit thread_local ThreadState tls_state{};

// Published once, before the first slot points at a hook. Read with acquire
// (a plain load on x86-64 and AArch64 both): it orders the tables' set-up
// before their first use by a hook, which the GOT write alone does not say
// to the compiler or to TSan.
std::atomic<SamplerState*> g_state{nullptr};

inline SamplerState* State() { return g_state.load(std::memory_order_acquire); }

// The host's functions, set before any slot points at a hook and never
// cleared: a thread may enter a hook after deactivation.
struct HostFunctions {
  void* (*malloc)(size_t);
  void* (*calloc)(size_t, size_t);
  void* (*realloc)(void*, size_t);
  void* (*reallocarray)(void*, size_t, size_t);
  void (*free)(void*);
  int (*posix_memalign)(void**, size_t, size_t);
  void* (*aligned_alloc)(size_t, size_t);
  void* (*memalign)(size_t, size_t);
  void* (*valloc)(size_t);
  void* (*pvalloc)(size_t);
  void* (*mallocx)(size_t, int);
  void* (*rallocx)(void*, size_t, int);
  void (*dallocx)(void*, int);
  void (*sdallocx)(void*, size_t, int);
  void* (*mi_malloc)(size_t);
  void* (*mi_zalloc)(size_t);
  void* (*mi_calloc)(size_t, size_t);
  void* (*mi_realloc)(void*, size_t);
  void (*mi_free)(void*);
  void* (*mi_malloc_aligned)(size_t, size_t);
  void* (*dlopen)(const char*, int);
  int (*dlclose)(void*);
  void* (*new_scalar)(size_t);
  void* (*new_array)(size_t);
  void* (*new_nothrow)(size_t, const std::nothrow_t&);
  void* (*new_array_nothrow)(size_t, const std::nothrow_t&);
  void* (*new_aligned)(size_t, std::align_val_t);
  void* (*new_array_aligned)(size_t, std::align_val_t);
  void (*delete_scalar)(void*);
  void (*delete_array)(void*);
  void (*delete_sized)(void*, size_t);
  void (*delete_array_sized)(void*, size_t);
  void (*delete_aligned)(void*, std::align_val_t);
  void (*delete_array_aligned)(void*, std::align_val_t);
  void (*delete_sized_aligned)(void*, size_t, std::align_val_t);
  void (*delete_array_sized_aligned)(void*, size_t, std::align_val_t);
};
HostFunctions host;

// The table, for a hook. The acquire load of the state orders the table's
// filling (before the state was first published) before its use, for TSan
// as for the compiler: a hook is reached only through a GOT slot written
// after both, a publication TSan cannot see. A plain load on x86-64 and
// AArch64; it costs the unsampled path nothing measurable.
inline const HostFunctions& Host() {
  (void)g_state.load(std::memory_order_acquire);
  return host;
}

// The crossing of a thread's countdown: whether this allocation is sampled.
// Not while deactivated (only the hooks that free are left then, and
// realloc's may come here): the next gap is drawn all the same, so the
// unsampled path stays one subtraction.
__attribute__((noinline)) bool CountdownCrossed(ThreadState& t) {
  SamplerState* s = State();
  if (t.busy || s == nullptr) return false;
  const bool crossed = t.countdown.Crossed(s->interval.load(std::memory_order_relaxed));
  return crossed && s->sampling.load(std::memory_order_relaxed);
}

// The whole unsampled path of an allocation hook: one subtraction and one
// compare on this thread's countdown.
inline bool Sampled(size_t size) {
  ThreadState& t = tls_state;
  t.countdown.bytes_until_sample -= static_cast<int64_t>(size);
  if (t.countdown.bytes_until_sample > 0) return false;
  return CountdownCrossed(t);
}

// Frames between the capture and the allocating code: RecordSample and
// the hook. Both are noinline, and neither calls the next in tail position.
constexpr int kSamplerFrames = 2;

__attribute__((noinline)) void RecordSample(void* ptr, size_t size) {
  ThreadState& t = tls_state;
  t.busy = true;
  SamplerState& s = *State();
  if (OnAgentThread()) {
    s.agent_thread_skips.fetch_add(1, std::memory_order_relaxed);
  } else {
    uintptr_t frames[StackTable::kMaxFrames];
    const int depth = CaptureStack(frames, StackTable::kMaxFrames, kSamplerFrames);
    const bool recording = s.recording.load(std::memory_order_relaxed);
    const uint32_t tid = recording ? static_cast<uint32_t>(gettid()) : 0;
    const uint64_t now = recording ? RecentClockNs() : 0;
    pthread_mutex_lock(&s.sample_mu);
    const uint32_t stack = s.stacks.Intern(frames, depth);
    const uint32_t record =
        stack != StackTable::kNoStack && recording ? s.recent.Append(size, stack, tid, now) : 0;
    pthread_mutex_unlock(&s.sample_mu);
    if (stack != StackTable::kNoStack &&
        s.live.Insert(reinterpret_cast<uintptr_t>(ptr), size, stack, record)) {
      s.samples.fetch_add(1, std::memory_order_relaxed);
    }
  }
  t.busy = false;
}

// The free of a sample an allocation window recorded: the window learns
// when and on which thread (rare: one free in hundreds of thousands).
__attribute__((noinline)) void ReleaseRecord(SamplerState& s, uint32_t record) {
  const auto tid = static_cast<uint32_t>(gettid());
  const uint64_t now = RecentClockNs();
  pthread_mutex_lock(&s.sample_mu);
  s.recent.Release(record, tid, now);
  pthread_mutex_unlock(&s.sample_mu);
}

inline void Forget(void* ptr) {
  if (ptr == nullptr) return;
  SamplerState* s = State();
  if (s == nullptr) return;
  if (const uint32_t record = s->live.Erase(reinterpret_cast<uintptr_t>(ptr))) {
    ReleaseRecord(*s, record);
  }
}

// realloc's old block leaves the table before the call (another thread may
// be handed the same address as soon as it is freed), and comes back if the
// call fails and the block lives on.
struct Moved {
  uint64_t size = 0;
  uint32_t stack = 0;
  uint32_t record = 0;
  bool sampled = false;
};

inline Moved TakeForRealloc(void* ptr) {
  Moved m;
  SamplerState* s = ptr != nullptr ? State() : nullptr;
  if (s != nullptr) {
    m.sampled = s->live.Take(reinterpret_cast<uintptr_t>(ptr), &m.size, &m.stack, &m.record);
  }
  return m;
}

inline void AfterRealloc(const Moved& old, void* old_ptr, void* ptr, size_t size) {
  if (ptr == nullptr) {
    if (!old.sampled) return;
    if (size != 0) {  // failed: the block lives on
      State()->live.Insert(reinterpret_cast<uintptr_t>(old_ptr), old.size, old.stack, old.record);
    } else if (old.record != 0) {  // realloc(p, 0) freed it
      ReleaseRecord(*State(), old.record);
    }
    return;
  }
  if (old.record != 0) ReleaseRecord(*State(), old.record);
  if (Sampled(size)) RecordSample(ptr, size);
}

size_t PageRounded(size_t size) {
  const auto page = static_cast<size_t>(getpagesize());
  return (size + page - 1) / page * page;
}

// The hooks. Each has the signature of the function it stands for.
void* HookMalloc(size_t size) {
  void* p = Host().malloc(size);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookCalloc(size_t n, size_t size) {
  void* p = Host().calloc(n, size);
  if (p != nullptr && Sampled(n * size)) RecordSample(p, n * size);
  return p;
}

void* HookRealloc(void* old, size_t size) {
  const Moved m = TakeForRealloc(old);
  void* p = Host().realloc(old, size);
  AfterRealloc(m, old, p, size);
  return p;
}

void* HookReallocarray(void* old, size_t n, size_t size) {
  const Moved m = TakeForRealloc(old);
  void* p = Host().reallocarray(old, n, size);
  AfterRealloc(m, old, p, n * size);  // p is null if n * size overflows
  return p;
}

void HookFree(void* p) {
  Forget(p);
  Host().free(p);
}

int HookPosixMemalign(void** out, size_t alignment, size_t size) {
  const int r = Host().posix_memalign(out, alignment, size);
  if (r == 0 && Sampled(size)) RecordSample(*out, size);
  return r;
}

void* HookAlignedAlloc(size_t alignment, size_t size) {
  void* p = Host().aligned_alloc(alignment, size);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookMemalign(size_t alignment, size_t size) {
  void* p = Host().memalign(alignment, size);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookValloc(size_t size) {
  void* p = Host().valloc(size);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookPvalloc(size_t size) {
  void* p = Host().pvalloc(size);
  if (p != nullptr && Sampled(PageRounded(size))) RecordSample(p, PageRounded(size));
  return p;
}

void* HookMallocx(size_t size, int flags) {
  void* p = Host().mallocx(size, flags);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookRallocx(void* old, size_t size, int flags) {
  const Moved m = TakeForRealloc(old);
  void* p = Host().rallocx(old, size, flags);
  AfterRealloc(m, old, p, size);
  return p;
}

void HookDallocx(void* p, int flags) {
  Forget(p);
  Host().dallocx(p, flags);
}

void HookSdallocx(void* p, size_t size, int flags) {
  Forget(p);
  Host().sdallocx(p, size, flags);
}

void* HookMiMalloc(size_t size) {
  void* p = Host().mi_malloc(size);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookMiZalloc(size_t size) {
  void* p = Host().mi_zalloc(size);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookMiCalloc(size_t n, size_t size) {
  void* p = Host().mi_calloc(n, size);
  if (p != nullptr && Sampled(n * size)) RecordSample(p, n * size);
  return p;
}

void* HookMiRealloc(void* old, size_t size) {
  const Moved m = TakeForRealloc(old);
  void* p = Host().mi_realloc(old, size);
  AfterRealloc(m, old, p, size);
  return p;
}

void HookMiFree(void* p) {
  Forget(p);
  Host().mi_free(p);
}

void* HookMiMallocAligned(size_t size, size_t alignment) {
  void* p = Host().mi_malloc_aligned(size, alignment);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

// A module opened while active is patched before dlopen returns. The patch
// runs after the host's dlopen, never inside it: the loader's locks are
// free again, and its constructors' allocations made before are simply not
// sampled. The host's dlopen sees this hook as its caller, so a bare name
// that only the real caller's RUNPATH finds is looked up there again
// (dlopen_search.h); if that fails too, dlopen is called once more so that
// dlerror() says what the host's own call would have said.
__attribute__((noinline)) void* HookDlopen(const char* file, int flags) {
  // First, with acquire: it orders the host table's set-up before its use
  // here (the GOT write that led here is no synchronization to TSan).
  SamplerState* s = State();
  void* handle = Host().dlopen(file, flags);
  if (handle == nullptr && file != nullptr && std::strchr(file, '/') == nullptr) {
    NotSampledByMemprof quiet;
    handle = DlopenInCallersPath(host.dlopen, file, flags, __builtin_return_address(0));
    if (handle == nullptr) handle = Host().dlopen(file, flags);
  }
  if (handle != nullptr && s != nullptr) {
    NotSampledByMemprof quiet;
    s->patcher.PatchLoaded();
  }
  return handle;
}

int HookDlclose(void* handle) {
  SamplerState* s = State();  // first, as in HookDlopen
  const int r = Host().dlclose(handle);
  if (s != nullptr) s->patcher.Prune();
  return r;
}

// operator new and delete where the allocator defines its own (jemalloc,
// tcmalloc, mimalloc's override): their calls never reach malloc's slots.
// Where the host's are libstdc++'s, which call malloc, they are not hooked
// (ResolveHostFunctions), so that nothing is counted twice. Inlined into
// each hook, so that RecordSample's caller is the hook (kSamplerFrames).
__attribute__((always_inline)) inline void* AfterNew(void* p, size_t size) {
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookNew(size_t n) { return AfterNew(Host().new_scalar(n), n); }
void* HookNewArray(size_t n) { return AfterNew(Host().new_array(n), n); }
void* HookNewNothrow(size_t n, const std::nothrow_t& t) noexcept {
  return AfterNew(Host().new_nothrow(n, t), n);
}
void* HookNewArrayNothrow(size_t n, const std::nothrow_t& t) noexcept {
  return AfterNew(Host().new_array_nothrow(n, t), n);
}
void* HookNewAligned(size_t n, std::align_val_t a) { return AfterNew(Host().new_aligned(n, a), n); }
void* HookNewArrayAligned(size_t n, std::align_val_t a) {
  return AfterNew(Host().new_array_aligned(n, a), n);
}
void HookDelete(void* p) noexcept {
  Forget(p);
  Host().delete_scalar(p);
}
void HookDeleteArray(void* p) noexcept {
  Forget(p);
  Host().delete_array(p);
}
void HookDeleteSized(void* p, size_t n) noexcept {
  Forget(p);
  Host().delete_sized(p, n);
}
void HookDeleteArraySized(void* p, size_t n) noexcept {
  Forget(p);
  Host().delete_array_sized(p, n);
}
void HookDeleteAligned(void* p, std::align_val_t a) noexcept {
  Forget(p);
  Host().delete_aligned(p, a);
}
void HookDeleteArrayAligned(void* p, std::align_val_t a) noexcept {
  Forget(p);
  Host().delete_array_aligned(p, a);
}
void HookDeleteSizedAligned(void* p, size_t n, std::align_val_t a) noexcept {
  Forget(p);
  Host().delete_sized_aligned(p, n, a);
}
void HookDeleteArraySizedAligned(void* p, size_t n, std::align_val_t a) noexcept {
  Forget(p);
  Host().delete_array_sized_aligned(p, n, a);
}

// Whether `fn` is libstdc++'s own (an operator new that calls malloc).
bool InLibstdcxx(void* fn) {
  Dl_info info{};
  return fn != nullptr && dladdr(fn, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "libstdc++") != nullptr;
}

template <typename Fn>
uintptr_t Address(Fn fn) {
  return reinterpret_cast<uintptr_t>(fn);
}

}  // namespace

HookSpec* SamplerHooks(size_t* count) {
  static HookSpec hooks[] = {
      {"malloc", Address(HookMalloc), 0, false},  // first: GotPatcher's check of the executable
      {"calloc", Address(HookCalloc), 0, false},
      {"realloc", Address(HookRealloc), 0, true},
      {"reallocarray", Address(HookReallocarray), 0, true},
      {"free", Address(HookFree), 0, true},
      {"posix_memalign", Address(HookPosixMemalign), 0, false},
      {"aligned_alloc", Address(HookAlignedAlloc), 0, false},
      {"memalign", Address(HookMemalign), 0, false},
      {"valloc", Address(HookValloc), 0, false},
      {"pvalloc", Address(HookPvalloc), 0, false},
      {"mallocx", Address(HookMallocx), 0, false},
      {"rallocx", Address(HookRallocx), 0, true},
      {"dallocx", Address(HookDallocx), 0, true},
      {"sdallocx", Address(HookSdallocx), 0, true},
      {"mi_malloc", Address(HookMiMalloc), 0, false},
      {"mi_zalloc", Address(HookMiZalloc), 0, false},
      {"mi_calloc", Address(HookMiCalloc), 0, false},
      {"mi_realloc", Address(HookMiRealloc), 0, true},
      {"mi_free", Address(HookMiFree), 0, true},
      {"mi_malloc_aligned", Address(HookMiMallocAligned), 0, false},
      {"dlopen", Address(HookDlopen), 0, false},
      {"dlclose", Address(HookDlclose), 0, false},
      {"_Znwm", Address(HookNew), 0, false},
      {"_Znam", Address(HookNewArray), 0, false},
      {"_ZnwmRKSt9nothrow_t", Address(HookNewNothrow), 0, false},
      {"_ZnamRKSt9nothrow_t", Address(HookNewArrayNothrow), 0, false},
      {"_ZnwmSt11align_val_t", Address(HookNewAligned), 0, false},
      {"_ZnamSt11align_val_t", Address(HookNewArrayAligned), 0, false},
      {"_ZdlPv", Address(HookDelete), 0, true},
      {"_ZdaPv", Address(HookDeleteArray), 0, true},
      {"_ZdlPvm", Address(HookDeleteSized), 0, true},
      {"_ZdaPvm", Address(HookDeleteArraySized), 0, true},
      {"_ZdlPvSt11align_val_t", Address(HookDeleteAligned), 0, true},
      {"_ZdaPvSt11align_val_t", Address(HookDeleteArrayAligned), 0, true},
      {"_ZdlPvmSt11align_val_t", Address(HookDeleteSizedAligned), 0, true},
      {"_ZdaPvmSt11align_val_t", Address(HookDeleteArraySizedAligned), 0, true},
  };
  *count = sizeof(hooks) / sizeof(hooks[0]);
  return hooks;
}

void ResolveHostFunctions() {
  size_t count = 0;
  HookSpec* hooks = SamplerHooks(&count);
  // HostFunctions' members are in the table's order, one pointer each;
  // memcpy, not a cast, so that no aliasing rule is bent.
  static_assert(sizeof(HostFunctions) == 36 * sizeof(void*));
  auto* bytes = reinterpret_cast<unsigned char*>(&host);
  for (size_t i = 0; i < count; ++i) {
    void* fn = nullptr;
    std::memcpy(&fn, bytes + i * sizeof(void*), sizeof(fn));
    if (fn == nullptr) {
      fn = HostSymbol(hooks[i].symbol);
      std::memcpy(bytes + i * sizeof(void*), &fn, sizeof(fn));
    }
    // C++'s operators are hooked only where the allocator replaced them.
    const bool cxx = std::strncmp(hooks[i].symbol, "_Z", 2) == 0;
    hooks[i].real = cxx && InLibstdcxx(fn) ? 0 : reinterpret_cast<uintptr_t>(fn);
  }
}

bool OnAgentThread() {
  char name[17] = {};
  if (prctl(PR_GET_NAME, name) != 0) return false;
  return std::strncmp(name, "memprof-", 8) == 0;
}

NotSampledByMemprof::NotSampledByMemprof() : was_busy_(tls_state.busy) { tls_state.busy = true; }
NotSampledByMemprof::~NotSampledByMemprof() { tls_state.busy = was_busy_; }

void InstallSamplerState(SamplerState* state) {
  if (State() != state) g_state.store(state, std::memory_order_release);
}

}  // namespace memprof::agent
