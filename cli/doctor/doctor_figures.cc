#include "cli/doctor/doctor_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/io/human_format.h"

namespace memprof::cli {
namespace {

double Ratio(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

const char* FamilyName(AllocatorFamily family) {
  switch (family) {
    case AllocatorFamily::kJemalloc:
      return "jemalloc";
    case AllocatorFamily::kGlibc:
      return "glibc";
    case AllocatorFamily::kTcmalloc:
      return "tcmalloc";
  }
  return "?";
}

GrowthRate RateOf(const GrowthFigures& growth) {
  GrowthRate rate;
  const auto& r = growth.readings;
  if (r.size() < 2) return rate;
  const StatsDelta whole = ComputeDelta(r.front(), r.back());
  rate.seconds = whole.interval_seconds;
  rate.allocated_change =
      static_cast<int64_t>(r.back().figures.allocated - r.front().figures.allocated);
  rate.rss_change = static_cast<int64_t>(r.back().figures.rss_bytes - r.front().figures.rss_bytes);
  if (rate.seconds > 0) {
    rate.allocated_per_second = static_cast<double>(rate.allocated_change) / rate.seconds;
    rate.rss_per_second = static_cast<double>(rate.rss_change) / rate.seconds;
  }
  rate.steady = true;
  for (size_t i = 1; i < r.size(); ++i) {
    rate.steady = rate.steady && r[i].figures.allocated > r[i - 1].figures.allocated;
  }
  return rate;
}

std::string SignedBytesText(double bytes) {
  const double magnitude = std::min(std::fabs(bytes), 1.8e19);
  if (magnitude < 0.5) return "0 B";
  return (bytes < 0 ? "-" : "+") + FormatBytes(static_cast<uint64_t>(std::llround(magnitude)));
}

std::string SecondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", seconds);
  return text;
}

uint64_t UnusedAllocatorBytes(const DoctorFigures& f) {
  switch (f.allocator) {
    case AllocatorFamily::kJemalloc:
      return f.jemalloc.dirty_bytes + f.jemalloc.muzzy_bytes;
    case AllocatorFamily::kTcmalloc:
      return f.tcmalloc.page_heap_free_bytes;
    case AllocatorFamily::kGlibc:
      break;
  }
  return f.glibc.free_bytes + f.glibc.fastbin_bytes;
}

uint64_t AllocatorResident(const DoctorFigures& f) {
  return std::min(f.summary.resident, f.smaps.anonymous_bytes);
}

RssParts PartsOf(const DoctorFigures& f) {
  RssParts p;
  p.allocator = AllocatorResident(f);
  p.thread_stacks = f.smaps.thread_stacks_bytes;
  p.binaries = f.smaps.binaries_bytes;
  p.other_files = f.smaps.other_files_bytes;
  p.shared_memory = f.smaps.shared_memory_bytes;
  p.other_anonymous = f.smaps.anonymous_bytes - p.allocator;
  return p;
}

DoctorRatios RatiosOf(const DoctorFigures& f) {
  DoctorRatios r;
  const MemoryFigures& s = f.summary;
  if (s.active > s.allocated) r.fragmentation = Ratio(s.active - s.allocated, s.active);
  const uint64_t allocator_memory = f.allocator == AllocatorFamily::kGlibc
                                        ? f.glibc.system_bytes + f.glibc.mmap_bytes
                                        : AllocatorResident(f);
  r.dirty_share = std::min(1.0, Ratio(UnusedAllocatorBytes(f), allocator_memory));
  // Both of the allocator's own accounting: capping one of them would not
  // make a share of the other.
  r.metadata_share = Ratio(s.metadata, s.resident);
  const RssParts parts = PartsOf(f);
  r.unexplained_share = Ratio(parts.other_anonymous, f.smaps.rss_bytes);
  r.stack_share = Ratio(parts.thread_stacks, f.smaps.rss_bytes);
  return r;
}

TcmallocFigures ReadTcmallocFigures(const std::map<std::string, uint64_t>& properties) {
  const auto value = [&](const char* name) {
    auto it = properties.find(name);
    return it == properties.end() ? uint64_t{0} : it->second;
  };
  TcmallocFigures t;
  t.page_heap_free_bytes = value("tcmalloc.pageheap_free_bytes");
  t.page_heap_unmapped_bytes = value("tcmalloc.pageheap_unmapped_bytes");
  t.central_cache_free_bytes = value("tcmalloc.central_cache_free_bytes");
  t.transfer_cache_free_bytes = value("tcmalloc.transfer_cache_free_bytes");
  t.thread_cache_bytes = value("tcmalloc.current_total_thread_cache_bytes");
  t.max_thread_cache_bytes = value("tcmalloc.max_total_thread_cache_bytes");
  t.aggressive_decommit = value("tcmalloc.aggressive_memory_decommit") != 0;
  return t;
}

double SamplerCoveredShare(const DoctorFigures& figures) {
  const uint64_t allocated = figures.summary.allocated;
  if (allocated == 0 || figures.sampler.live_bytes <= 0) return 0;
  return figures.sampler.live_bytes / static_cast<double>(allocated);
}

}  // namespace memprof::cli
