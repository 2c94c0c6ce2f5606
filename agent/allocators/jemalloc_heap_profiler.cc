#include "agent/allocators/jemalloc_heap_profiler.h"

#include <unistd.h>

#include <cstring>
#include <string>

#include "common/fd.h"

namespace memprof::agent {
namespace {

constexpr char kHeapMagic[] = "heap_v2/";

// jemalloc opens the dump path itself; /proc/thread-self/fd/N reopens our
// file from whichever thread's descriptor table it is in.
std::string PathOf(int fd) { return "/proc/thread-self/fd/" + std::to_string(fd); }

// A dump that does not start with the heap_v2 header is not a profile.
Result<void> CheckMagic(int fd) {
  char head[sizeof(kHeapMagic) - 1] = {};
  ssize_t n = ::pread(fd, head, sizeof(head), 0);
  if (n != static_cast<ssize_t>(sizeof(head)) || std::memcmp(head, kHeapMagic, sizeof(head)) != 0) {
    return Fail(ErrorCode::kInternal, "jemalloc wrote something that is not a heap_v2 profile");
  }
  return {};
}

}  // namespace

Result<uint64_t> WriteProfileInto(const JemallocControl& jemalloc, int fd) {
  if (auto r = jemalloc.DumpTo(PathOf(fd)); !r) return Fail(r.error());
  if (auto r = CheckMagic(fd); !r) return Fail(r.error());
  return FileSize(fd);
}

Result<uint64_t> JemallocHeapProfiler::WriteInto(int fd) { return WriteProfileInto(jemalloc_, fd); }

}  // namespace memprof::agent
