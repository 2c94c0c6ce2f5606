#include "cli/doctor/doctor_report.h"

#include <cstdio>

#include "cli/io/human_format.h"
#include "cli/io/text_table.h"
#include "common/json_schema_versions.h"

namespace memprof::cli {
namespace {

using nlohmann::json;

std::string ShareOf(uint64_t part, uint64_t whole) {
  return whole == 0 ? "-" : FormatPercent(static_cast<double>(part) / static_cast<double>(whole));
}

void PrintBreakdown(const DoctorFigures& f, std::ostream& out) {
  const RssParts p = PartsOf(f);
  const uint64_t whole = f.smaps.rss_bytes;
  TextTable table({"where", "RSS", "share", ""});
  table.SetAlign(1, TextTable::Align::kRight);
  table.SetAlign(2, TextTable::Align::kRight);
  const auto row = [&](const char* what, uint64_t bytes, const std::string& note) {
    table.AddRow({what, FormatBytes(bytes), ShareOf(bytes, whole), note});
  };
  row("allocator", p.allocator, std::string(FamilyName(f.allocator)) + "'s resident memory");
  row("thread stacks", p.thread_stacks, std::to_string(f.smaps.thread_stacks) + " stacks");
  row("binaries, libraries", p.binaries, "the program and its shared objects");
  row("other files", p.other_files, "other file mappings");
  row("shared memory", p.shared_memory, "/dev/shm, SysV, memfd, shared anonymous");
  row("other anonymous", p.other_anonymous, "anonymous memory that is not the allocator's");
  row("total", whole, "RSS: the sum over /proc/" + std::to_string(f.pid) + "/smaps");
  table.Print(out);
}

void PrintTcmalloc(const TcmallocFigures& t, std::ostream& out) {
  out << "  page heap free " << FormatBytes(t.page_heap_free_bytes) << ", given back "
      << FormatBytes(t.page_heap_unmapped_bytes) << "; free in central caches "
      << FormatBytes(t.central_cache_free_bytes) << ", transfer caches "
      << FormatBytes(t.transfer_cache_free_bytes) << ", thread caches "
      << FormatBytes(t.thread_cache_bytes) << " (at most " << FormatBytes(t.max_thread_cache_bytes)
      << ")\n  aggressive_memory_decommit:" << (t.aggressive_decommit ? "true" : "false") << '\n';
}

// The allocator's resident memory is the breakdown's row: not repeated here.
void PrintAllocator(const DoctorFigures& f, std::ostream& out) {
  const MemoryFigures& s = f.summary;
  out << "\n"
      << FamilyName(f.allocator) << ": allocated " << FormatBytes(s.allocated) << ", active "
      << FormatBytes(s.active) << ", metadata " << FormatBytes(s.metadata) << ", mapped "
      << FormatBytes(s.mapped) << ", retained " << FormatBytes(s.retained) << '\n';
  if (f.allocator == AllocatorFamily::kTcmalloc) {
    PrintTcmalloc(f.tcmalloc, out);
  } else if (f.allocator == AllocatorFamily::kJemalloc) {
    const JemallocFigures& j = f.jemalloc;
    out << "  dirty " << FormatBytes(j.dirty_bytes) << ", muzzy " << FormatBytes(j.muzzy_bytes)
        << ", thread caches " << FormatBytes(j.tcache_bytes) << ", " << j.arenas << " arenas, "
        << j.threads << " threads\n  options: dirty_decay_ms:" << j.dirty_decay_ms
        << " muzzy_decay_ms:" << j.muzzy_decay_ms
        << " background_thread:" << (j.background_thread ? "true" : "false")
        << " narenas:" << j.narenas << " tcache_max:" << j.tcache_max
        << " retain:" << (j.retain ? "true" : "false") << '\n';
  } else {
    const GlibcFigures& g = f.glibc;
    out << "  " << g.arenas << " arenas hold " << FormatBytes(g.system_bytes) << ", free in bins "
        << FormatBytes(g.free_bytes) << ", in fast bins " << FormatBytes(g.fastbin_bytes) << ", "
        << g.mmap_chunks << " mmap()ed chunks " << FormatBytes(g.mmap_bytes) << '\n';
  }
}

void PrintRatios(const DoctorFigures& f, std::ostream& out) {
  const DoctorRatios r = RatiosOf(f);
  out << "\nfragmentation " << FormatPercent(r.fragmentation) << " (active vs allocated), unused "
      << FormatPercent(r.dirty_share) << " of allocator memory, metadata "
      << FormatPercent(r.metadata_share) << " of resident, outside the allocator "
      << FormatPercent(r.unexplained_share) << " of RSS\n";
}

void PrintGrowth(const DoctorFigures& f, std::ostream& out) {
  if (f.growth.readings.size() < 2) return;
  const GrowthRate g = RateOf(f.growth);
  out << "growth over " << SecondsText(g.seconds) << ": allocated "
      << SignedBytesText(static_cast<double>(g.allocated_change)) << " ("
      << SignedBytesText(g.allocated_per_second) << "/s), RSS "
      << SignedBytesText(static_cast<double>(g.rss_change)) << '\n';
}

// Why memprof's sampler serves rather than the allocator's own.
const char* WhyMemprofSamples(AllocatorFamily family) {
  switch (family) {
    case AllocatorFamily::kJemalloc:
      return "jemalloc was started without prof:true";
    case AllocatorFamily::kTcmalloc:
      return "tcmalloc's own sampler is off";
    case AllocatorFamily::kGlibc:
      break;
  }
  return "glibc's malloc cannot sample";
}

// Where memprof's own sampler serves: what its samples estimate is live
// beside what the allocator counts, and why the two differ.
void PrintSampler(const DoctorFigures& f, std::ostream& out) {
  const SamplerFigures& s = f.sampler;
  if (!s.serves) return;
  out << "\nmemprof's sampler serves this process (" << WhyMemprofSamples(f.allocator) << ")";
  if (s.since_unix_ms == 0) {
    out << " and was never switched on: `memprofctl activate --pid " << f.pid
        << "` starts it; its profiles then hold what is allocated from then on\n";
    return;
  }
  out << ", " << (s.active ? "sampling" : "switched off") << "; switched on "
      << FormatLocalTime(s.since_unix_ms) << " ("
      << FormatRelative(s.since_unix_ms, std::chrono::system_clock::now()) << ")\n"
      << "  its samples estimate " << FormatBytes(static_cast<uint64_t>(s.live_bytes))
      << " live of what was allocated since then: " << FormatPercent(SamplerCoveredShare(f))
      << " of the " << FormatBytes(f.summary.allocated) << " " << FamilyName(f.allocator)
      << " counts allocated; the rest was allocated before it was switched on";
  out << (s.not_intercepted.empty() ? "\n" : ", or where it cannot intercept:\n");
  for (const std::string& what : s.not_intercepted) out << "    " << what << '\n';
  if (s.dropped > 0) {
    out << "  " << s.dropped << " sampled allocations did not fit its tables and are not counted\n";
  }
}

void PrintFindings(const std::vector<Finding>& findings, std::ostream& out) {
  if (findings.empty()) {
    out << "\nNo findings: nothing crosses doctor's thresholds.\n";
    return;
  }
  out << "\nFindings:\n";
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& finding = findings[i];
    out << (i + 1) << ". " << finding.what << " [" << finding.id << "]\n"
        << "   numbers: " << finding.numbers << '\n';
    for (const std::string& advice : finding.advice) out << "   do: " << advice << '\n';
  }
}

json AllocatorJson(const DoctorFigures& f) {
  const MemoryFigures& s = f.summary;
  const JemallocFigures& j = f.jemalloc;
  const GlibcFigures& g = f.glibc;
  const TcmallocFigures& t = f.tcmalloc;
  return {{"kind", FamilyName(f.allocator)},
          {"allocated", s.allocated},
          {"active", s.active},
          {"metadata", s.metadata},
          {"resident", s.resident},
          {"mapped", s.mapped},
          {"retained", s.retained},
          {"unused_bytes", UnusedAllocatorBytes(f)},
          {"jemalloc",
           {{"dirty_bytes", j.dirty_bytes},
            {"muzzy_bytes", j.muzzy_bytes},
            {"tcache_bytes", j.tcache_bytes},
            {"arenas", j.arenas},
            {"threads", j.threads},
            {"dirty_decay_ms", j.dirty_decay_ms},
            {"muzzy_decay_ms", j.muzzy_decay_ms},
            {"background_thread", j.background_thread},
            {"narenas", j.narenas},
            {"tcache_max", j.tcache_max},
            {"retain", j.retain}}},
          {"glibc",
           {{"arenas", g.arenas},
            {"system_bytes", g.system_bytes},
            {"free_bytes", g.free_bytes},
            {"fastbin_bytes", g.fastbin_bytes},
            {"mmap_bytes", g.mmap_bytes},
            {"mmap_chunks", g.mmap_chunks}}},
          {"tcmalloc",
           {{"page_heap_free_bytes", t.page_heap_free_bytes},
            {"page_heap_unmapped_bytes", t.page_heap_unmapped_bytes},
            {"central_cache_free_bytes", t.central_cache_free_bytes},
            {"transfer_cache_free_bytes", t.transfer_cache_free_bytes},
            {"thread_cache_bytes", t.thread_cache_bytes},
            {"max_thread_cache_bytes", t.max_thread_cache_bytes},
            {"aggressive_decommit", t.aggressive_decommit}}}};
}

json GrowthJson(const DoctorFigures& f) {
  const GrowthRate g = RateOf(f.growth);
  json readings = json::array();
  for (const StatsSample& r : f.growth.readings) {
    readings.push_back({{"unix_ms", r.unix_ms},
                        {"allocated", r.figures.allocated},
                        {"rss_bytes", r.figures.rss_bytes}});
  }
  return {{"seconds", g.seconds},
          {"allocated_change_bytes", g.allocated_change},
          {"allocated_bytes_per_second", g.allocated_per_second},
          {"rss_change_bytes", g.rss_change},
          {"steady", g.steady},
          {"readings", readings}};
}

json SamplerJson(const DoctorFigures& f) {
  const SamplerFigures& s = f.sampler;
  return {{"serves", s.serves},
          {"active", s.active},
          {"since_unix_ms", s.since_unix_ms},
          {"live_estimate_bytes", s.live_bytes},
          {"allocated_bytes", f.summary.allocated},
          {"covered_share", SamplerCoveredShare(f)},
          {"dropped", s.dropped},
          {"not_intercepted", s.not_intercepted}};
}

json BreakdownJson(const DoctorFigures& f) {
  const RssParts p = PartsOf(f);
  json top = json::array();
  for (const SmapsMapping& m : f.smaps.top_anonymous) {
    top.push_back(
        {{"start", m.start}, {"end", m.end}, {"path", m.path}, {"rss_bytes", m.rss_bytes}});
  }
  return {{"allocator_bytes", p.allocator},
          {"thread_stacks_bytes", p.thread_stacks},
          {"thread_stacks", f.smaps.thread_stacks},
          {"binaries_bytes", p.binaries},
          {"other_files_bytes", p.other_files},
          {"shared_memory_bytes", p.shared_memory},
          {"other_anonymous_bytes", p.other_anonymous},
          {"smaps_rss_bytes", f.smaps.rss_bytes},
          {"top_anonymous_mappings", top}};
}

}  // namespace

void PrintDoctorReport(const DoctorFigures& figures, const std::vector<Finding>& findings,
                       std::ostream& out) {
  out << "pid " << figures.pid << ": RSS " << FormatBytes(figures.rss_bytes) << "\n\n";
  PrintBreakdown(figures, out);
  PrintAllocator(figures, out);
  PrintRatios(figures, out);
  PrintGrowth(figures, out);
  PrintSampler(figures, out);
  if (const std::string skipped = ChecksNotApplicable(figures.allocator); !skipped.empty()) {
    out << "not judged: " << skipped << '\n';
  }
  PrintFindings(findings, out);
}

json DoctorReportToJson(const DoctorFigures& f, const std::vector<Finding>& findings) {
  const DoctorRatios r = RatiosOf(f);
  json list = json::array();
  for (const Finding& finding : findings) {
    list.push_back({{"id", finding.id},
                    {"what", finding.what},
                    {"numbers", finding.numbers},
                    {"advice", finding.advice}});
  }
  return {{"schema_version", kDoctorJsonVersion},
          {"pid", f.pid},
          {"rss_bytes", f.rss_bytes},
          {"breakdown", BreakdownJson(f)},
          {"allocator", AllocatorJson(f)},
          {"growth", GrowthJson(f)},
          {"sampler", SamplerJson(f)},
          {"ratios",
           {{"fragmentation", r.fragmentation},
            {"unused_share", r.dirty_share},
            {"metadata_share", r.metadata_share},
            {"outside_allocator_share", r.unexplained_share},
            {"thread_stack_share", r.stack_share}}},
          {"findings", list}};
}

}  // namespace memprof::cli
