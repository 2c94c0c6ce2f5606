// Preloaded into a child of agent_sampler_tests: an "allocator" with its own
// operator new and delete, as jemalloc, tcmalloc and mimalloc's override
// have, which take memory without calling malloc through any GOT.
#include <cstddef>
#include <new>

extern "C" void* __libc_malloc(size_t size);
extern "C" void __libc_free(void* p);

#define FAKE_NEW_EXPORT __attribute__((visibility("default")))

namespace {
void* Take(size_t size) {
  void* p = __libc_malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace

FAKE_NEW_EXPORT void* operator new(size_t size) { return Take(size); }
FAKE_NEW_EXPORT void* operator new[](size_t size) { return Take(size); }
FAKE_NEW_EXPORT void operator delete(void* p) noexcept { __libc_free(p); }
FAKE_NEW_EXPORT void operator delete[](void* p) noexcept { __libc_free(p); }
FAKE_NEW_EXPORT void operator delete(void* p, size_t) noexcept { __libc_free(p); }
FAKE_NEW_EXPORT void operator delete[](void* p, size_t) noexcept { __libc_free(p); }
