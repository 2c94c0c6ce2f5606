#include "cli/doctor/doctor_collector.h"

#include <algorithm>
#include <thread>

#include "common/proc_smaps.h"
#include "common/proc_status.h"

namespace memprof::cli {
namespace {

// How many of the largest anonymous mappings a finding names.
constexpr size_t kTopAnonymousMappings = 3;

Error ProcError(const Error& error, const Target& target, const std::string& file) {
  if (error.code == ErrorCode::kNotFound) {
    return Error(ErrorCode::kNotFound, DescribeTarget(target) + " has exited (no " + file + ")");
  }
  if (error.code == ErrorCode::kPermissionDenied) {
    return Error(ErrorCode::kPermissionDenied,
                 "cannot read " + file + ": it is readable only by the process's owner and "
                 "root (run memprofctl as that user)");
  }
  return error;
}

Result<void> ReadSmaps(const Target& target, const std::string& proc_root, DoctorFigures& f) {
  const std::string dir = proc_root + "/" + std::to_string(target.pid);
  auto rollup = ReadTextFile(dir + "/smaps_rollup");
  if (!rollup) return Fail(ProcError(rollup.error(), target, dir + "/smaps_rollup"));
  auto rss = ParseSmapsRollupRss(*rollup);
  if (!rss) return Fail(rss.error());
  auto smaps_text = ReadTextFile(dir + "/smaps");
  if (!smaps_text) return Fail(ProcError(smaps_text.error(), target, dir + "/smaps"));
  auto mappings = ParseSmaps(*smaps_text);
  if (!mappings) return Fail(mappings.error());
  f.rss_bytes = *rss;
  f.smaps = BreakDownSmaps(*mappings, kTopAnonymousMappings);
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
    return Fail(ErrorCode::kFailedPrecondition,
                "this process uses tcmalloc, which doctor cannot judge yet (it knows jemalloc "
                "and glibc malloc); `memprofctl stats` shows tcmalloc's figures and "
                "`memprofctl purge` gives its free pages back to the OS");
  }
  return Fail(ErrorCode::kFailedPrecondition,
              "the allocator of this process is neither jemalloc nor glibc malloc; doctor has "
              "no figures to judge");
}

}  // namespace

Result<DoctorFigures> CollectDoctorFigures(const Target& target, ProfileClient& client,
                                           const std::string& proc_root) {
  if (target.remote()) {
    return Fail(ErrorCode::kFailedPrecondition,
                "doctor reads the target's /proc/<pid>/smaps, so it works on local processes "
                "only; run it on " + AddressHost(target.address));
  }
  DoctorFigures f;
  f.pid = target.pid;
  f.cpus = std::max(1u, std::thread::hardware_concurrency());
  memprof::v1::StatsRequest request;
  request.set_raw_format(memprof::v1::RAW_STATS_FORMAT_JSON);
  auto stats = client.Stats(target, request);
  if (!stats) return Fail(stats.error());
  if (auto r = ReadAllocator(*stats, f); !r) return Fail(r.error());
  if (auto r = ReadSmaps(target, proc_root, f); !r) return Fail(r.error());
  return f;
}

}  // namespace memprof::cli
