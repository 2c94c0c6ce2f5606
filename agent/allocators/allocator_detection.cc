#include "agent/allocators/allocator_detection.h"

#include <dlfcn.h>

#include "agent/allocators/glibc_allocator.h"
#include "agent/shared/host_symbols.h"
#include "agent/allocators/jemalloc_allocator.h"
#include "agent/allocators/other_allocator.h"
#include "agent/allocators/tcmalloc_allocator.h"

namespace memprof::agent {
namespace {

bool MallocIsFromLibc() {
  Dl_info malloc_info{}, libc_info{};
  void* malloc_fn = HostSymbol("malloc");
  void* libc_fn = HostSymbol("gnu_get_libc_version");
  if (malloc_fn == nullptr || libc_fn == nullptr) return false;
  if (dladdr(malloc_fn, &malloc_info) == 0 || dladdr(libc_fn, &libc_info) == 0) return false;
  return malloc_info.dli_fbase == libc_info.dli_fbase;
}

}  // namespace

std::unique_ptr<Allocator> DetectAllocator() {
  if (auto control = JemallocControl::Detect()) return MakeJemallocAllocator(*control);
  if (auto tcmalloc = TcmallocControl::Detect()) return MakeTcmallocAllocator(*tcmalloc);
  if (MallocIsFromLibc()) return MakeGlibcAllocator();
  return MakeOtherAllocator();
}

}  // namespace memprof::agent
