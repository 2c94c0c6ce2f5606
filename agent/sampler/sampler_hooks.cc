#include "agent/sampler/sampler_hooks.h"

#include <dlfcn.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

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
};
HostFunctions host;

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
    pthread_mutex_lock(&s.sample_mu);
    const uint32_t stack = s.stacks.Intern(frames, depth);
    pthread_mutex_unlock(&s.sample_mu);
    if (stack != StackTable::kNoStack &&
        s.live.Insert(reinterpret_cast<uintptr_t>(ptr), size, stack)) {
      s.samples.fetch_add(1, std::memory_order_relaxed);
    }
  }
  t.busy = false;
}

inline void Forget(void* ptr) {
  if (ptr == nullptr) return;
  if (SamplerState* s = State()) s->live.Erase(reinterpret_cast<uintptr_t>(ptr));
}

// realloc's old block leaves the table before the call (another thread may
// be handed the same address as soon as it is freed), and comes back if the
// call fails and the block lives on.
struct Moved {
  uint64_t size = 0;
  uint32_t stack = 0;
  bool sampled = false;
};

inline Moved TakeForRealloc(void* ptr) {
  Moved m;
  SamplerState* s = ptr != nullptr ? State() : nullptr;
  if (s != nullptr) {
    m.sampled = s->live.Take(reinterpret_cast<uintptr_t>(ptr), &m.size, &m.stack);
  }
  return m;
}

inline void AfterRealloc(const Moved& old, void* old_ptr, void* ptr, size_t size) {
  if (ptr == nullptr) {
    if (old.sampled && size != 0) {
      State()->live.Insert(reinterpret_cast<uintptr_t>(old_ptr), old.size, old.stack);
    }
    return;
  }
  if (Sampled(size)) RecordSample(ptr, size);
}

size_t PageRounded(size_t size) {
  const auto page = static_cast<size_t>(getpagesize());
  return (size + page - 1) / page * page;
}


// The hooks. Each has the signature of the function it stands for.
void* HookMalloc(size_t size) {
  void* p = host.malloc(size);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookCalloc(size_t n, size_t size) {
  void* p = host.calloc(n, size);
  if (p != nullptr && Sampled(n * size)) RecordSample(p, n * size);
  return p;
}

void* HookRealloc(void* old, size_t size) {
  const Moved m = TakeForRealloc(old);
  void* p = host.realloc(old, size);
  AfterRealloc(m, old, p, size);
  return p;
}

void* HookReallocarray(void* old, size_t n, size_t size) {
  const Moved m = TakeForRealloc(old);
  void* p = host.reallocarray(old, n, size);
  AfterRealloc(m, old, p, n * size);  // p is null if n * size overflows
  return p;
}

void HookFree(void* p) {
  Forget(p);
  host.free(p);
}

int HookPosixMemalign(void** out, size_t alignment, size_t size) {
  const int r = host.posix_memalign(out, alignment, size);
  if (r == 0 && Sampled(size)) RecordSample(*out, size);
  return r;
}

void* HookAlignedAlloc(size_t alignment, size_t size) {
  void* p = host.aligned_alloc(alignment, size);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookMemalign(size_t alignment, size_t size) {
  void* p = host.memalign(alignment, size);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookValloc(size_t size) {
  void* p = host.valloc(size);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookPvalloc(size_t size) {
  void* p = host.pvalloc(size);
  if (p != nullptr && Sampled(PageRounded(size))) RecordSample(p, PageRounded(size));
  return p;
}

void* HookMallocx(size_t size, int flags) {
  void* p = host.mallocx(size, flags);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookRallocx(void* old, size_t size, int flags) {
  const Moved m = TakeForRealloc(old);
  void* p = host.rallocx(old, size, flags);
  AfterRealloc(m, old, p, size);
  return p;
}

void HookDallocx(void* p, int flags) {
  Forget(p);
  host.dallocx(p, flags);
}

void HookSdallocx(void* p, size_t size, int flags) {
  Forget(p);
  host.sdallocx(p, size, flags);
}

void* HookMiMalloc(size_t size) {
  void* p = host.mi_malloc(size);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookMiZalloc(size_t size) {
  void* p = host.mi_zalloc(size);
  if (p != nullptr && Sampled(size)) RecordSample(p, size);
  return p;
}

void* HookMiCalloc(size_t n, size_t size) {
  void* p = host.mi_calloc(n, size);
  if (p != nullptr && Sampled(n * size)) RecordSample(p, n * size);
  return p;
}

void* HookMiRealloc(void* old, size_t size) {
  const Moved m = TakeForRealloc(old);
  void* p = host.mi_realloc(old, size);
  AfterRealloc(m, old, p, size);
  return p;
}

void HookMiFree(void* p) {
  Forget(p);
  host.mi_free(p);
}

void* HookMiMallocAligned(size_t size, size_t alignment) {
  void* p = host.mi_malloc_aligned(size, alignment);
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
  void* handle = host.dlopen(file, flags);
  if (handle == nullptr && file != nullptr && std::strchr(file, '/') == nullptr) {
    NotSampledByMemprof quiet;
    handle = DlopenInCallersPath(host.dlopen, file, flags, __builtin_return_address(0));
    if (handle == nullptr) handle = host.dlopen(file, flags);
  }
  SamplerState* s = State();
  if (handle != nullptr && s != nullptr) {
    NotSampledByMemprof quiet;
    s->patcher.PatchLoaded();
  }
  return handle;
}

int HookDlclose(void* handle) {
  const int r = host.dlclose(handle);
  if (SamplerState* s = State()) s->patcher.Prune();
  return r;
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
  };
  *count = sizeof(hooks) / sizeof(hooks[0]);
  return hooks;
}

void ResolveHostFunctions() {
  size_t count = 0;
  HookSpec* hooks = SamplerHooks(&count);
  // HostFunctions' members are in the table's order, one pointer each;
  // memcpy, not a cast, so that no aliasing rule is bent.
  static_assert(sizeof(HostFunctions) == 22 * sizeof(void*));
  auto* bytes = reinterpret_cast<unsigned char*>(&host);
  for (size_t i = 0; i < count; ++i) {
    void* fn = nullptr;
    std::memcpy(&fn, bytes + i * sizeof(void*), sizeof(fn));
    if (fn == nullptr) {
      fn = HostSymbol(hooks[i].symbol);
      std::memcpy(bytes + i * sizeof(void*), &fn, sizeof(fn));
    }
    hooks[i].real = reinterpret_cast<uintptr_t>(fn);
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
