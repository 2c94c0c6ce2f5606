// Part of libmemprof_agent_server.so only (never of a program or a test).
//
// The server is loaded with RTLD_DEEPBIND (module_loader.h): it and the
// libraries it brings look symbols up among themselves first. For malloc and
// operator new that would mean glibc's, not the host's allocator (jemalloc,
// preloaded or linked), and memory crossing between the two would corrupt
// both heaps. So the server defines the allocation functions itself, first
// in its own scope, and forwards each to the host's definition: every byte
// gRPC and protobuf allocate comes from, and goes back to, the host's
// allocator, exactly as without deep binding. The server is loaded
// RTLD_LOCAL, so these definitions are invisible to the host.
//
// It also names gRPC's threads: gRPC names each thread it starts through
// pthread_setname_np, which resolves here first; the name gets the
// "memprof-" prefix so that an operator can tell the agent's threads apart,
// and the thread's allocations are no longer sampled.
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/prctl.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#include "agent/shared/agent_thread.h"
#include "agent/shared/host_symbols.h"

namespace memprof::agent {
namespace {

template <typename Fn>
Fn Resolve(std::atomic<Fn>& slot, const char* name) {
  Fn fn = slot.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = reinterpret_cast<Fn>(HostSymbol(name));
    slot.store(fn, std::memory_order_release);
  }
  return fn;
}

#define MEMPROF_HOST_FN(var, name, type)                     \
  type Host_##var() {                                        \
    static std::atomic<type> slot{nullptr};                  \
    return Resolve(slot, name);                              \
  }

using MallocFn = void* (*)(size_t);
using FreeFn = void (*)(void*);
using CallocFn = void* (*)(size_t, size_t);
using ReallocFn = void* (*)(void*, size_t);
using MemalignFn = int (*)(void**, size_t, size_t);
using AlignedFn = void* (*)(size_t, size_t);
using UsableFn = size_t (*)(void*);
MEMPROF_HOST_FN(malloc, "malloc", MallocFn)
MEMPROF_HOST_FN(free, "free", FreeFn)
MEMPROF_HOST_FN(calloc, "calloc", CallocFn)
MEMPROF_HOST_FN(realloc, "realloc", ReallocFn)
MEMPROF_HOST_FN(posix_memalign, "posix_memalign", MemalignFn)
MEMPROF_HOST_FN(aligned_alloc, "aligned_alloc", AlignedFn)
MEMPROF_HOST_FN(memalign, "memalign", AlignedFn)
MEMPROF_HOST_FN(malloc_usable_size, "malloc_usable_size", UsableFn)
#undef MEMPROF_HOST_FN

void* AlignedOrNull(size_t alignment, size_t size) {
  void* p = nullptr;
  return Host_posix_memalign()(&p, alignment, size == 0 ? 1 : size) == 0 ? p : nullptr;
}

// operator new as the standard describes it: retry through the new-handler,
// then throw. Only reached for the host's memory, through the host's malloc.
void* NewOrThrow(size_t size, size_t alignment) {
  if (size == 0) size = 1;
  while (true) {
    void* p = alignment <= alignof(std::max_align_t) ? Host_malloc()(size)
                                                      : AlignedOrNull(alignment, size);
    if (p != nullptr) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* NewOrNull(size_t size, size_t alignment) noexcept {
  try {
    return NewOrThrow(size, alignment);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace
}  // namespace memprof::agent

using memprof::agent::NewOrNull;
using memprof::agent::NewOrThrow;
namespace host = memprof::agent;

#define MEMPROF_EXPORT __attribute__((visibility("default")))

extern "C" {
MEMPROF_EXPORT void* malloc(size_t size) { return host::Host_malloc()(size); }
MEMPROF_EXPORT void free(void* p) { host::Host_free()(p); }
MEMPROF_EXPORT void* calloc(size_t n, size_t size) { return host::Host_calloc()(n, size); }
MEMPROF_EXPORT void* realloc(void* p, size_t size) { return host::Host_realloc()(p, size); }
MEMPROF_EXPORT int posix_memalign(void** out, size_t alignment, size_t size) {
  return host::Host_posix_memalign()(out, alignment, size);
}
MEMPROF_EXPORT void* aligned_alloc(size_t alignment, size_t size) {
  return host::Host_aligned_alloc()(alignment, size);
}
MEMPROF_EXPORT void* memalign(size_t alignment, size_t size) {
  return host::Host_memalign()(alignment, size);
}
MEMPROF_EXPORT size_t malloc_usable_size(void* p) { return host::Host_malloc_usable_size()(p); }

MEMPROF_EXPORT int pthread_setname_np(pthread_t thread, const char* name) {
  // gRPC's threads get our prefix here; a name that has it already is kept
  // (our own threads name themselves: shared/agent_thread.h). gRPC names
  // each of its threads first thing, from the thread itself: that is where
  // its allocations stop being sampled into the host's heap profile.
  char full[16] = "memprof-";
  if (std::strncmp(name, full, std::strlen(full)) == 0) full[0] = '\0';
  std::strncat(full, name, sizeof(full) - std::strlen(full) - 1);
  if (pthread_equal(thread, pthread_self())) {
    memprof::agent::StopSamplingThisThread();
    return prctl(PR_SET_NAME, full) == 0 ? 0 : errno;
  }
  using SetNameFn = int (*)(pthread_t, const char*);
  auto next = reinterpret_cast<SetNameFn>(dlsym(RTLD_NEXT, "pthread_setname_np"));
  return next != nullptr ? next(thread, full) : ENOSYS;
}
}  // extern "C"

// The replaceable global allocation functions, all forwarded to the host's
// malloc family (which is what libstdc++'s own operator new does).
MEMPROF_EXPORT void* operator new(size_t n) { return NewOrThrow(n, 0); }
MEMPROF_EXPORT void* operator new[](size_t n) { return NewOrThrow(n, 0); }
MEMPROF_EXPORT void* operator new(size_t n, const std::nothrow_t&) noexcept {
  return NewOrNull(n, 0);
}
MEMPROF_EXPORT void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  return NewOrNull(n, 0);
}
MEMPROF_EXPORT void* operator new(size_t n, std::align_val_t a) {
  return NewOrThrow(n, static_cast<size_t>(a));
}
MEMPROF_EXPORT void* operator new[](size_t n, std::align_val_t a) {
  return NewOrThrow(n, static_cast<size_t>(a));
}
MEMPROF_EXPORT void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return NewOrNull(n, static_cast<size_t>(a));
}
MEMPROF_EXPORT void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return NewOrNull(n, static_cast<size_t>(a));
}
MEMPROF_EXPORT void operator delete(void* p) noexcept { host::Host_free()(p); }
MEMPROF_EXPORT void operator delete[](void* p) noexcept { host::Host_free()(p); }
MEMPROF_EXPORT void operator delete(void* p, size_t) noexcept { host::Host_free()(p); }
MEMPROF_EXPORT void operator delete[](void* p, size_t) noexcept { host::Host_free()(p); }
MEMPROF_EXPORT void operator delete(void* p, const std::nothrow_t&) noexcept {
  host::Host_free()(p);
}
MEMPROF_EXPORT void operator delete[](void* p, const std::nothrow_t&) noexcept {
  host::Host_free()(p);
}
MEMPROF_EXPORT void operator delete(void* p, std::align_val_t) noexcept { host::Host_free()(p); }
MEMPROF_EXPORT void operator delete[](void* p, std::align_val_t) noexcept { host::Host_free()(p); }
MEMPROF_EXPORT void operator delete(void* p, size_t, std::align_val_t) noexcept {
  host::Host_free()(p);
}
MEMPROF_EXPORT void operator delete[](void* p, size_t, std::align_val_t) noexcept {
  host::Host_free()(p);
}
MEMPROF_EXPORT void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  host::Host_free()(p);
}
MEMPROF_EXPORT void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  host::Host_free()(p);
}
