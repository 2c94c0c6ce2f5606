#include "cli/doctor/doctor_findings.h"

#include <cstdio>
#include <optional>

#include "cli/io/human_format.h"

namespace memprof::cli {
namespace {

std::string Pid(const DoctorFigures& f) { return std::to_string(f.pid); }

std::string DecayText(int64_t ms) { return ms < 0 ? "-1 (never)" : std::to_string(ms) + " ms"; }

bool LongDecay(int64_t ms) { return ms < 0 || ms > kLongDecayMs; }

std::optional<Finding> JemallocDirtyPages(const DoctorFigures& f, const DoctorRatios& r) {
  const uint64_t unused = UnusedAllocatorBytes(f);
  if (unused < kDoctorMinBytes || r.dirty_share < kDirtyShareLimit) return std::nullopt;
  const JemallocFigures& j = f.jemalloc;
  Finding out{"dirty_pages",
              "jemalloc keeps many unused (dirty/muzzy) pages resident",
              FormatBytes(j.dirty_bytes) + " dirty + " + FormatBytes(j.muzzy_bytes) +
                  " muzzy = " + FormatPercent(r.dirty_share) + " of jemalloc's resident " +
                  FormatBytes(AllocatorResident(f)) + " (limit " + FormatPercent(kDirtyShareLimit) +
                  "); dirty_decay_ms " + DecayText(j.dirty_decay_ms) + ", muzzy_decay_ms " +
                  DecayText(j.muzzy_decay_ms) + ", background_thread " +
                  (j.background_thread ? "true" : "false"),
              {"give them back now, without a restart: memprofctl purge --pid " + Pid(f)}};
  if (LongDecay(j.dirty_decay_ms) || LongDecay(j.muzzy_decay_ms)) {
    out.advice.push_back("let jemalloc return them by itself: MALLOC_CONF=dirty_decay_ms:10000,"
                         "muzzy_decay_ms:10000 (now " + DecayText(j.dirty_decay_ms) + " and " +
                         DecayText(j.muzzy_decay_ms) + ")");
  }
  if (!j.background_thread) {
    out.advice.push_back("MALLOC_CONF=background_thread:true purges on jemalloc's own threads, "
                         "also while the application's threads are idle");
  }
  return out;
}

// jemalloc's arenas, or tcmalloc's caches, where the unallocated part of
// active memory lies.
std::string FragmentationWhere(const DoctorFigures& f) {
  if (f.allocator == AllocatorFamily::kJemalloc) {
    return " over " + std::to_string(f.jemalloc.arenas) + " arenas on " + std::to_string(f.cpus) +
           " CPUs";
  }
  const TcmallocFigures& t = f.tcmalloc;
  return "; free in the central caches " + FormatBytes(t.central_cache_free_bytes) +
         ", transfer caches " + FormatBytes(t.transfer_cache_free_bytes) + ", thread caches " +
         FormatBytes(t.thread_cache_bytes);
}

std::optional<Finding> Fragmentation(const DoctorFigures& f, const DoctorRatios& r) {
  const MemoryFigures& s = f.summary;
  if (r.fragmentation < kFragmentationLimit || s.active - s.allocated < kDoctorMinBytes) {
    return std::nullopt;
  }
  Finding out{
      "fragmentation",
      std::string("much of ") + FamilyName(f.allocator) + "'s active memory is not allocated",
      "active " + FormatBytes(s.active) + ", allocated " + FormatBytes(s.allocated) +
          ": fragmentation " + FormatPercent(r.fragmentation) + " (limit " +
          FormatPercent(kFragmentationLimit) + ")" + FragmentationWhere(f),
      {}};
  if (f.allocator == AllocatorFamily::kJemalloc && f.jemalloc.arenas > f.cpus) {
    out.advice.push_back("fewer arenas share pages better: MALLOC_CONF=narenas:" +
                         std::to_string(f.cpus) + " (now " + std::to_string(f.jemalloc.arenas) +
                         ")");
  }
  out.advice.push_back("find what mixes long- and short-lived objects: memprofctl profile --pid " +
                       Pid(f));
  return out;
}

std::optional<Finding> JemallocThreadCaches(const DoctorFigures& f) {
  const JemallocFigures& j = f.jemalloc;
  if (j.tcache_bytes < kTcacheLimitBytes) return std::nullopt;
  return Finding{"thread_caches", "jemalloc's thread caches hold much memory",
                 FormatBytes(j.tcache_bytes) + " in the caches of " + std::to_string(j.threads) +
                     " threads (limit " + FormatBytes(kTcacheLimitBytes) + "); tcache_max " +
                     std::to_string(j.tcache_max),
                 {"cache only small sizes: MALLOC_CONF=tcache_max:4096 (now " +
                      std::to_string(j.tcache_max) + ")",
                  "or run fewer threads that allocate"}};
}

std::optional<Finding> TcmallocFreePages(const DoctorFigures& f, const DoctorRatios& r) {
  const TcmallocFigures& t = f.tcmalloc;
  if (t.page_heap_free_bytes < kDoctorMinBytes || r.dirty_share < kDirtyShareLimit) {
    return std::nullopt;
  }
  Finding out{"page_heap_free",
              "tcmalloc keeps many free pages in its page heap",
              FormatBytes(t.page_heap_free_bytes) + " free = " + FormatPercent(r.dirty_share) +
                  " of tcmalloc's resident " + FormatBytes(AllocatorResident(f)) + " (limit " +
                  FormatPercent(kDirtyShareLimit) + "); " +
                  FormatBytes(t.page_heap_unmapped_bytes) + " already given back",
              {"give them back now, without a restart: memprofctl purge --pid " + Pid(f) +
                   " (MallocExtension::ReleaseFreeMemory)",
               "let tcmalloc return them sooner by itself: TCMALLOC_RELEASE_RATE=10 in the "
               "environment (1 unless set; 0 never returns them)"}};
  if (!t.aggressive_decommit) {
    out.advice.push_back(
        "or return every free span at once: TCMALLOC_AGGRESSIVE_DECOMMIT=true "
        "(more page faults when the memory is needed again)");
  }
  return out;
}

std::optional<Finding> TcmallocThreadCaches(const DoctorFigures& f) {
  const TcmallocFigures& t = f.tcmalloc;
  if (t.thread_cache_bytes < kTcacheLimitBytes) return std::nullopt;
  return Finding{
      "thread_caches",
      "tcmalloc's thread caches hold much memory",
      FormatBytes(t.thread_cache_bytes) + " in the thread caches (limit " +
          FormatBytes(kTcacheLimitBytes) + "); their total may grow to " +
          FormatBytes(t.max_thread_cache_bytes),
      {"cap them: TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES=" + std::to_string(kTcacheLimitBytes / 2) +
           " in the environment (now " + std::to_string(t.max_thread_cache_bytes) + ")",
       "or run fewer threads that allocate"}};
}

std::optional<Finding> HeapGrowth(const DoctorFigures& f) {
  const GrowthRate g = RateOf(f.growth);
  if (!g.steady || g.allocated_per_second < kGrowthLimitBytesPerSecond) return std::nullopt;
  const auto& readings = f.growth.readings;
  Finding out{"heap_growth",
              "the heap grows " + FormatBytes(static_cast<uint64_t>(g.allocated_per_second)) + "/s",
              "allocated grew from " + FormatBytes(readings.front().figures.allocated) + " to " +
                  FormatBytes(readings.back().figures.allocated) + " in " + SecondsText(g.seconds) +
                  ", growing from each of " + std::to_string(readings.size()) +
                  " readings to the next (limit " +
                  FormatBytes(static_cast<uint64_t>(kGrowthLimitBytesPerSecond)) + "/s); RSS " +
                  SignedBytesText(g.rss_per_second) + "/s",
              {"a few seconds cannot tell a leak from a warm-up or a burst: watch it longer "
               "with memprofctl stats --pid " +
               Pid(f) + " --watch 10s"}};
  if (f.allocator == AllocatorFamily::kGlibc) {
    out.advice.push_back(
        "to see which code holds the growth, restart the process under "
        "`memprofctl run` (glibc malloc cannot be profiled)");
  } else {
    out.advice.push_back("see which code holds it: memprofctl profile --pid " + Pid(f) +
                         " --duration 5m --out growth.heap, then memprofctl report growth.heap");
  }
  return out;
}

std::optional<Finding> GlibcFreeMemory(const DoctorFigures& f, const DoctorRatios& r) {
  const uint64_t unused = UnusedAllocatorBytes(f);
  if (unused < kDoctorMinBytes || r.dirty_share < kDirtyShareLimit) return std::nullopt;
  return Finding{"free_in_arenas", "glibc malloc keeps much free memory in its arenas",
                 FormatBytes(unused) + " free in bins and fast bins = " +
                     FormatPercent(r.dirty_share) + " of the " +
                     FormatBytes(f.glibc.system_bytes + f.glibc.mmap_bytes) +
                     " its arenas hold (limit " + FormatPercent(kDirtyShareLimit) + ")",
                 {"give it back now, without a restart: memprofctl purge --pid " + Pid(f) +
                      " (malloc_trim(0))",
                  "trim sooner by itself: MALLOC_TRIM_THRESHOLD_=<bytes> in the environment "
                  "(mallopt M_TRIM_THRESHOLD; 128 KiB unless set)"}};
}

std::optional<Finding> GlibcArenas(const DoctorFigures& f) {
  const uint32_t many = kGlibcArenasPerCpu * f.cpus;
  if (f.glibc.arenas <= many || f.glibc.system_bytes < kDoctorMinBytes) return std::nullopt;
  return Finding{"many_arenas", "glibc malloc has many arenas, each holding its own free memory",
                 std::to_string(f.glibc.arenas) + " arenas on " + std::to_string(f.cpus) +
                     " CPUs (limit " + std::to_string(many) + ") hold " +
                     FormatBytes(f.glibc.system_bytes),
                 {"cap them: MALLOC_ARENA_MAX=" + std::to_string(many) + " in the environment"}};
}

std::string TopMappings(const SmapsBreakdown& smaps) {
  std::string text;
  for (const SmapsMapping& m : smaps.top_anonymous) {
    char range[64];
    std::snprintf(range, sizeof(range), "%llx-%llx", static_cast<unsigned long long>(m.start),
                  static_cast<unsigned long long>(m.end));
    text += std::string(text.empty() ? "" : ", ") + range + " " +
            (m.path.empty() ? "" : m.path + " ") + FormatBytes(m.rss_bytes);
  }
  return text;
}

std::optional<Finding> Unexplained(const DoctorFigures& f, const DoctorRatios& r) {
  const RssParts parts = PartsOf(f);
  if (parts.other_anonymous < kDoctorMinBytes || r.unexplained_share < kUnexplainedShareLimit) {
    return std::nullopt;
  }
  return Finding{"outside_allocator", "much anonymous memory is not the allocator's",
                 FormatBytes(parts.other_anonymous) + " = " + FormatPercent(r.unexplained_share) +
                     " of RSS (limit " + FormatPercent(kUnexplainedShareLimit) +
                     "); largest anonymous mappings: " + TopMappings(f.smaps),
                 {"someone else maps memory: look up those addresses in /proc/" + Pid(f) +
                      "/maps and the code that mmap()s them",
                  "a second allocator (e.g. glibc malloc used by a library linked against it, "
                  "or a runtime's own heap) is not in these figures"}};
}

std::optional<Finding> ThreadStacks(const DoctorFigures& f, const DoctorRatios& r) {
  const uint64_t stacks = f.smaps.thread_stacks_bytes;
  if (stacks < kDoctorMinBytes || r.stack_share < kStackShareLimit) return std::nullopt;
  return Finding{"thread_stacks", "thread stacks take a large share of RSS",
                 FormatBytes(stacks) + " in " + std::to_string(f.smaps.thread_stacks) +
                     " stacks = " + FormatPercent(r.stack_share) + " of RSS (limit " +
                     FormatPercent(kStackShareLimit) + ")",
                 {"run fewer threads, or give them smaller stacks (pthread_attr_setstacksize, "
                  "or `ulimit -s` before start: glibc sizes new threads' stacks by it)"}};
}

}  // namespace

std::vector<Finding> Diagnose(const DoctorFigures& f) {
  const DoctorRatios r = RatiosOf(f);
  std::vector<std::optional<Finding>> all = {HeapGrowth(f)};
  switch (f.allocator) {
    case AllocatorFamily::kJemalloc:
      all.insert(all.end(),
                 {JemallocDirtyPages(f, r), Fragmentation(f, r), JemallocThreadCaches(f)});
      break;
    case AllocatorFamily::kTcmalloc:
      all.insert(all.end(),
                 {TcmallocFreePages(f, r), Fragmentation(f, r), TcmallocThreadCaches(f)});
      break;
    case AllocatorFamily::kGlibc:
      all.insert(all.end(), {GlibcFreeMemory(f, r), GlibcArenas(f)});
      break;
  }
  all.push_back(Unexplained(f, r));
  all.push_back(ThreadStacks(f, r));
  std::vector<Finding> findings;
  for (auto& finding : all) {
    if (finding) findings.push_back(std::move(*finding));
  }
  return findings;
}

std::string ChecksNotApplicable(AllocatorFamily family) {
  if (family != AllocatorFamily::kTcmalloc) return "";
  return "decay times, arenas and background threads are jemalloc's and glibc's: tcmalloc has "
         "none of them (it returns free pages at TCMALLOC_RELEASE_RATE)";
}

}  // namespace memprof::cli
