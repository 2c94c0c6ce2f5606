#include "cli/doctor/doctor_figures.h"

#include <algorithm>

namespace memprof::cli {
namespace {

double Ratio(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

uint64_t UnusedAllocatorBytes(const DoctorFigures& f) {
  if (f.allocator == AllocatorFamily::kJemalloc) {
    return f.jemalloc.dirty_bytes + f.jemalloc.muzzy_bytes;
  }
  return f.glibc.free_bytes + f.glibc.fastbin_bytes;
}

RssParts PartsOf(const DoctorFigures& f) {
  RssParts p;
  p.allocator = std::min(f.summary.resident, f.smaps.anonymous_bytes);
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
  const uint64_t allocator_memory = f.allocator == AllocatorFamily::kJemalloc
                                        ? s.resident
                                        : f.glibc.system_bytes + f.glibc.mmap_bytes;
  r.dirty_share = std::min(1.0, Ratio(UnusedAllocatorBytes(f), allocator_memory));
  r.metadata_share = Ratio(s.metadata, s.resident);
  const RssParts parts = PartsOf(f);
  r.unexplained_share = Ratio(parts.other_anonymous, f.smaps.rss_bytes);
  r.stack_share = Ratio(parts.thread_stacks, f.smaps.rss_bytes);
  return r;
}

}  // namespace memprof::cli
