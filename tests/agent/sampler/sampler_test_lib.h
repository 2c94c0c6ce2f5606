#ifndef MEMPROF_TESTS_AGENT_SAMPLER_SAMPLER_TEST_LIB_H_
#define MEMPROF_TESTS_AGENT_SAMPLER_SAMPLER_TEST_LIB_H_

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>

namespace memprof::agent::testing {

// One of the test libraries (sampler_test_lib.cc), opened with dlopen: its
// allocations go through its own GOT.
struct SamplerTestLib {
  void* handle = nullptr;
  void* (*malloc)(size_t) = nullptr;
  void* (*calloc)(size_t, size_t) = nullptr;
  void* (*realloc)(void*, size_t) = nullptr;
  void* (*memalign)(size_t, size_t) = nullptr;
  void (*free)(void*) = nullptr;
  void (*leak)(void**, size_t, size_t) = nullptr;
  int (*capture_here)(uintptr_t*, int) = nullptr;
  void* (*dlopen_plugin)(const char*) = nullptr;

  template <typename Fn>
  void Bind(Fn& fn, const char* name) {
    fn = reinterpret_cast<Fn>(dlsym(handle, name));
  }

  // Opens `path`; handle is null on failure (the test then fails on it).
  static SamplerTestLib Open(const char* path) {
    SamplerTestLib lib;
    lib.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib.handle == nullptr) return lib;
    lib.Bind(lib.malloc, "LibMalloc");
    lib.Bind(lib.calloc, "LibCalloc");
    lib.Bind(lib.realloc, "LibRealloc");
    lib.Bind(lib.memalign, "LibMemalign");
    lib.Bind(lib.free, "LibFree");
    lib.Bind(lib.leak, "LibLeak");
    lib.Bind(lib.capture_here, "LibCaptureHere");
    lib.Bind(lib.dlopen_plugin, "LibDlopen");
    return lib;
  }
};

// The library loaded before any activation, for the whole test program.
inline SamplerTestLib& PreloadedTestLib() {
  static SamplerTestLib lib = SamplerTestLib::Open(MEMPROF_SAMPLER_TESTLIB);
  return lib;
}

}  // namespace memprof::agent::testing

#endif  // MEMPROF_TESTS_AGENT_SAMPLER_SAMPLER_TEST_LIB_H_
