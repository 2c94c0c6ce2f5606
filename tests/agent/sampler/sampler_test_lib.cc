// A library the sampler's tests dlopen: its calls to the malloc family go
// through its own GOT, as a host library's do. Built twice (two names), so
// that one can be opened while the sampler is active.
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdint>

#include "agent/sampler/stack_capture.h"

#define TESTLIB_EXPORT extern "C" __attribute__((visibility("default"), noinline))

TESTLIB_EXPORT void* LibMalloc(size_t size) { return malloc(size); }
TESTLIB_EXPORT void* LibCalloc(size_t n, size_t size) { return calloc(n, size); }
TESTLIB_EXPORT void* LibRealloc(void* p, size_t size) { return realloc(p, size); }
TESTLIB_EXPORT void* LibMemalign(size_t alignment, size_t size) {
  return memalign(alignment, size);
}
TESTLIB_EXPORT void LibFree(void* p) { free(p); }

// Leaks `count` blocks of `size` bytes into `out`, all from one stack.
TESTLIB_EXPORT void LibLeak(void** out, size_t count, size_t size) {
  for (size_t i = 0; i < count; ++i) out[i] = malloc(size);
}

// The stack as seen from here: frames[0] must lie in this function.
TESTLIB_EXPORT int LibCaptureHere(uintptr_t* frames, int max) {
  const int n = memprof::agent::CaptureStack(frames, max, 0);
  asm volatile("" ::: "memory");  // keeps the call above from being a tail call
  return n;
}

// Opens `name` as a host library opens its plugins: a bare name, found
// through this library's RUNPATH ($ORIGIN/runpath).
TESTLIB_EXPORT void* LibDlopen(const char* name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
