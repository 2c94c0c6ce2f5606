#include "agent/allocators/glibc_allocator.h"

#include <gnu/libc-version.h>
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "agent/allocators/sampler_heap_profiler.h"

namespace memprof::agent {
namespace {

class GlibcAllocator final : public Allocator {
 public:
  AllocatorInfo Info() const override {
    AllocatorInfo info;
    info.kind = AllocatorKind::kGlibc;
    info.version = std::string("glibc ") + gnu_get_libc_version();
    DescribeMemprofSampler(info);
    return info;
  }

  // Maps mallinfo2 onto the jemalloc-shaped summary where the meaning matches:
  // allocated/active = bytes in use (arena + mmapped chunks), mapped = bytes
  // obtained from the system, retained = free bytes malloc keeps.
  Result<HeapSummary> Summary() const override {
    struct mallinfo2 mi = mallinfo2();
    HeapSummary s;
    s.allocated = mi.uordblks + mi.hblkhd;
    s.active = s.allocated;
    s.mapped = mi.arena + mi.hblkhd;
    s.resident = s.mapped;
    s.retained = mi.fordblks;
    return s;
  }

  Result<AllocatorReport> Report(ReportFormat) const override {
    char* buf = nullptr;
    size_t len = 0;
    FILE* f = open_memstream(&buf, &len);
    if (f == nullptr) return Fail(ErrorCode::kInternal, "open_memstream failed");
    int rc = malloc_info(0, f);
    std::fclose(f);
    std::string out(buf != nullptr ? buf : "", len);
    std::free(buf);
    if (rc != 0) return Fail(ErrorCode::kInternal, "malloc_info failed");
    return AllocatorReport{ReportFormat::kXml, std::move(out)};
  }

  Result<uint64_t> UnusedBytes() const override { return mallinfo2().fordblks; }
  // malloc_trim(0) trims the top of every arena and, since glibc 2.8, also
  // gives back whole free pages inside them (MADV_DONTNEED).
  Result<void> Purge() const override {
    malloc_trim(0);  // its return value only says whether anything was released
    return {};
  }
  const char* PurgeMethod() const override { return "malloc_trim(0)"; }
};

}  // namespace

std::unique_ptr<Allocator> MakeGlibcAllocator() { return std::make_unique<GlibcAllocator>(); }

}  // namespace memprof::agent
