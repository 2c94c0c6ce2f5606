#include "cli/doctor/doctor_collector.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "cli/client/start_deadline.h"
#include "cli/doctor/sampler_estimate.h"
#include "common/proc_smaps.h"
#include "common/text_file.h"

namespace memprof::cli {
namespace {

// How many of the largest anonymous mappings a finding names.
constexpr size_t kTopAnonymousMappings = 3;
// Readings of a watch: the start, the middle and the end, so that growth
// means growing in each half, not one burst.
constexpr int kGrowthReadings = 3;

// A process that changed its user after it started (a service that dropped
// root) is not dumpable: the kernel keeps its /proc files root's, even from
// the user it runs as now.
std::string UnreadableProcFile(const std::string& file) {
  struct stat st{};
  if (::geteuid() != 0 && ::stat(file.c_str(), &st) == 0 && st.st_uid == 0) {
    return "cannot read " + file + ": the kernel keeps it for root, as for every process that "
           "changed its user after it started (a service that dropped root is not dumpable); "
           "run memprofctl doctor as root";
  }
  return "cannot read " + file + ": it is readable only by the process's owner and root (run "
         "memprofctl as that user)";
}

Error ProcError(const Error& error, const Target& target, const std::string& file) {
  if (error.code == ErrorCode::kNotFound) {
    return Error(ErrorCode::kNotFound, DescribeTarget(target) + " has exited (no " + file + ")");
  }
  if (error.code == ErrorCode::kPermissionDenied) return Error(ErrorCode::kPermissionDenied,
                                                               UnreadableProcFile(file));
  return error;
}

// One reading of the whole RSS: the parts add up to it.
Result<void> ReadSmaps(const Target& target, const std::string& proc_root, DoctorFigures& f) {
  const std::string path = proc_root + "/" + std::to_string(target.pid) + "/smaps";
  auto smaps_text = ReadTextFile(path);
  if (!smaps_text) return Fail(ProcError(smaps_text.error(), target, path));
  auto mappings = ParseSmaps(*smaps_text);
  if (!mappings) return Fail(mappings.error());
  f.smaps = BreakDownSmaps(*mappings, kTopAnonymousMappings);
  f.rss_bytes = f.smaps.rss_bytes;
  return {};
}

Result<void> ReadAllocator(const memprof::v1::StatsResponse& stats, DoctorFigures& f) {
  f.summary = FiguresOf(stats);
  if (stats.allocator() == memprof::v1::ALLOCATOR_KIND_JEMALLOC) {
    auto jemalloc = ParseJemallocFigures(stats.raw());
    if (!jemalloc) return Fail(jemalloc.error());
    f.allocator = AllocatorFamily::kJemalloc;
    f.jemalloc = *jemalloc;
    return {};
  }
  if (stats.allocator() == memprof::v1::ALLOCATOR_KIND_GLIBC) {
    auto glibc = ParseMallocInfo(stats.raw());
    if (!glibc) return Fail(glibc.error());
    f.allocator = AllocatorFamily::kGlibc;
    f.glibc = *glibc;
    return {};
  }
  if (stats.allocator() == memprof::v1::ALLOCATOR_KIND_TCMALLOC) {
    f.allocator = AllocatorFamily::kTcmalloc;
    f.tcmalloc = ReadTcmallocFigures(
        {stats.allocator_properties().begin(), stats.allocator_properties().end()});
    return {};
  }
  return Fail(ErrorCode::kFailedPrecondition,
              "the allocator of this process is neither jemalloc, glibc malloc nor tcmalloc; "
              "doctor has no figures to judge");
}

StatsSample SampleOf(const memprof::v1::StatsResponse& stats) {
  return StatsSample{std::chrono::steady_clock::now(), stats.collected_unix_ms(), stats.allocator(),
                     FiguresOf(stats)};
}

// The readings over the watch, the last one with the allocator's report.
Result<memprof::v1::StatsResponse> WatchHeap(const Target& target, ProfileClient& client,
                                             const GrowthWatch& watch, GrowthFigures& growth) {
  memprof::v1::StatsRequest summary_only;
  memprof::v1::StatsRequest full;
  full.set_raw_format(memprof::v1::RAW_STATS_FORMAT_JSON);
  const int readings = watch.interval.count() > 0 ? kGrowthReadings : 1;
  for (int i = 1;; ++i) {
    auto stats = client.Stats(target, i == readings ? full : summary_only);
    if (!stats) return Fail(stats.error());
    if (readings > 1) growth.readings.push_back(SampleOf(*stats));
    if (i == readings) return stats;
    if (!SleepUnlessStopped(watch.interval / (readings - 1), watch.stop)) {
      return Fail(ErrorCode::kCancelled, "interrupted");
    }
  }
}

}  // namespace

Result<DoctorFigures> CollectDoctorFigures(const Target& target, ProfileClient& client,
                                           const std::string& proc_root, const GrowthWatch& watch) {
  if (target.remote()) {
    return Fail(ErrorCode::kFailedPrecondition,
                "doctor reads the target's /proc/<pid>/smaps, so it works on local processes "
                "only; run it on " + AddressHost(target.address));
  }
  DoctorFigures f;
  f.pid = target.pid;
  f.cpus = std::max(1u, std::thread::hardware_concurrency());
  auto stats = WatchHeap(target, client, watch, f.growth);
  if (!stats) return Fail(stats.error());
  if (auto r = ReadAllocator(*stats, f); !r) return Fail(r.error());
  auto sampler = CollectSamplerFigures(target, client, watch.stop);
  if (!sampler) return Fail(sampler.error());
  f.sampler = std::move(*sampler);
  if (auto r = ReadSmaps(target, proc_root, f); !r) return Fail(r.error());
  return f;
}

}  // namespace memprof::cli
