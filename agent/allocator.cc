#include "agent/allocator.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "agent/host_symbols.h"
#include "agent/jemalloc_heap_profiler.h"
#include "agent/process_identity.h"
#include "agent/tcmalloc_allocator.h"

namespace memprof::agent {
namespace {

class JemallocAllocator final : public Allocator {
 public:
  explicit JemallocAllocator(JemallocControl control) : control_(control), profiler_(control_) {}

  AllocatorInfo Info() const override {
    AllocatorInfo info;
    info.kind = AllocatorKind::kJemalloc;
    info.version = control_.Version();
    info.profiling_supported = control_.ProfilingSupported();
    info.profiling_enabled = info.profiling_supported && control_.ProfilingEnabled();
    info.profiling_active = info.profiling_enabled && control_.ProfilingActive();
    info.sample_interval_bytes = info.profiling_enabled ? control_.SampleInterval() : 0;
    return info;
  }
  Result<HeapSummary> Summary() const override { return control_.ReadSummary(); }
  Result<AllocatorReport> Report(ReportFormat wanted) const override {
    const bool json = wanted == ReportFormat::kJson;
    auto text = control_.StatsReport(json);
    if (!text) return Fail(text.error());
    return AllocatorReport{json ? ReportFormat::kJson : ReportFormat::kText, std::move(*text)};
  }
  const JemallocControl* Jemalloc() const override { return &control_; }
  Result<HeapProfiler*> ReadyProfiler() const override {
    if (auto ready = RequireHeapProfiling(*this); !ready) return Fail(ready.error());
    return &profiler_;
  }
  Result<uint64_t> UnusedBytes() const override { return control_.UnusedBytes(); }
  Result<void> Purge() const override { return control_.PurgeAllArenas(); }
  const char* PurgeMethod() const override { return "mallctl arena.4096.purge"; }

 private:
  JemallocControl control_;
  mutable JemallocHeapProfiler profiler_;  // stateless over control_
};

// glibc's malloc: mallinfo2() for the summary, malloc_info() for the report.
class GlibcAllocator final : public Allocator {
 public:
  AllocatorInfo Info() const override {
    AllocatorInfo info;
    info.kind = AllocatorKind::kGlibc;
    info.version = std::string("glibc ") + gnu_get_libc_version();
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

class OtherAllocator final : public Allocator {
 public:
  AllocatorInfo Info() const override { return AllocatorInfo{}; }
  Result<HeapSummary> Summary() const override {
    return Fail(ErrorCode::kFailedPrecondition,
                "the process allocator is neither jemalloc, tcmalloc nor glibc malloc; no statistics");
  }
  Result<AllocatorReport> Report(ReportFormat) const override { return Fail(Summary().error()); }
  Result<uint64_t> UnusedBytes() const override { return Fail(Summary().error()); }
  Result<void> Purge() const override {
    return Fail(ErrorCode::kFailedPrecondition,
                "the process allocator is neither jemalloc, tcmalloc nor glibc malloc; memprof cannot "
                "make it give memory back");
  }
  const char* PurgeMethod() const override { return ""; }
};

bool MallocIsFromLibc() {
  Dl_info malloc_info{}, libc_info{};
  void* malloc_fn = HostSymbol("malloc");
  void* libc_fn = HostSymbol("gnu_get_libc_version");
  if (malloc_fn == nullptr || libc_fn == nullptr) return false;
  if (dladdr(malloc_fn, &malloc_info) == 0 || dladdr(libc_fn, &libc_info) == 0) return false;
  return malloc_info.dli_fbase == libc_info.dli_fbase;
}

}  // namespace

Result<HeapProfiler*> Allocator::ReadyProfiler() const {
  auto jemalloc = RequireHeapProfiling(*this);  // says why not
  return Fail(jemalloc ? Error(ErrorCode::kInternal, "no heap profiler") : jemalloc.error());
}

std::unique_ptr<Allocator> DetectAllocator() {
  if (auto control = JemallocControl::Detect()) {
    return std::make_unique<JemallocAllocator>(*control);
  }
  if (auto tcmalloc = TcmallocControl::Detect()) return MakeTcmallocAllocator(*tcmalloc);
  if (MallocIsFromLibc()) return std::make_unique<GlibcAllocator>();
  return std::make_unique<OtherAllocator>();
}

Result<const JemallocControl*> RequireHeapProfiling(const Allocator& allocator) {
  const JemallocControl* jemalloc = allocator.Jemalloc();
  if (jemalloc == nullptr) {
    return Fail(ErrorCode::kFailedPrecondition,
                std::string("this process does not use jemalloc (its allocator is ") +
                    AllocatorKindName(allocator.Info().kind) +
                    "), so its heap cannot be profiled; restart it under "
                    "`memprofctl run -- <command>`, which preloads jemalloc ready for profiling");
  }
  if (!jemalloc->ProfilingSupported()) {
    return Fail(ErrorCode::kFailedPrecondition,
                "this process's jemalloc (" + jemalloc->Version() +
                    ") was built without heap profiling support (config.prof=false); restart "
                    "it with a jemalloc built with --enable-prof, e.g. under `memprofctl run`");
  }
  if (!jemalloc->ProfilingEnabled()) {
    return Fail(ErrorCode::kFailedPrecondition,
                "heap profiling was not enabled when the process started; restart it with "
                "MALLOC_CONF=prof:true,prof_active:false (or use `memprofctl run`)");
  }
  return jemalloc;
}

namespace {

Result<MemoryReading> ReadMemory(const Allocator& allocator) {
  MemoryReading reading;
  auto unused = allocator.UnusedBytes();  // jemalloc: refreshes the epoch first
  if (!unused) return Fail(unused.error());
  reading.unused_bytes = *unused;
  auto summary = allocator.Summary();
  if (!summary) return Fail(summary.error());
  reading.summary = *summary;
  reading.rss_bytes = CurrentRssBytes();
  return reading;
}

}  // namespace

Result<PurgeOutcome> PurgeAndMeasure(const Allocator& allocator) {
  auto before = ReadMemory(allocator);
  if (!before) return Fail(before.error());
  if (auto purged = allocator.Purge(); !purged) return Fail(purged.error());
  auto after = ReadMemory(allocator);
  if (!after) return Fail(after.error());
  return PurgeOutcome{*before, *after, allocator.PurgeMethod()};
}

const char* AllocatorKindName(AllocatorKind kind) {
  switch (kind) {
    case AllocatorKind::kJemalloc: return "jemalloc";
    case AllocatorKind::kGlibc: return "glibc";
    case AllocatorKind::kOther: return "other";
    case AllocatorKind::kTcmalloc: return "tcmalloc";
  }
  return "other";
}

}  // namespace memprof::agent
