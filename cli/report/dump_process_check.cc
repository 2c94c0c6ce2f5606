#include "cli/report/dump_process_check.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "cli/report/aggregate/symbolization.h"

namespace memprof::report {
namespace {

std::string Flag(pid_t pid) { return "--pid " + std::to_string(pid) + ": "; }

}  // namespace

Result<void> CompareDumpWithProcess(pid_t pid,
                                    const std::vector<report::symbolize::MemoryMapping>& dump,
                                    const std::vector<report::symbolize::MemoryMapping>& live) {
  const report::symbolize::MemoryMapping* first = nullptr;
  for (const report::symbolize::MemoryMapping& mapping : dump) {
    if (mapping.FileBacked() && mapping.inode != 0) {
      first = &mapping;
      break;
    }
  }
  if (first == nullptr) return {};
  for (const report::symbolize::MemoryMapping& mapping : live) {
    if (mapping.start == first->start && mapping.inode == first->inode) return {};
  }
  return Fail(ErrorCode::kInvalidArgument,
              Flag(pid) + "process " + std::to_string(pid) +
                  " is not the one the dump came from: the dump maps " + first->path + " at " +
                  report::aggregate::HexAddress(first->start) + ", process " + std::to_string(pid) +
                  " does not (another program, or a restart); leave --pid out, or give the pid "
                  "of the process that wrote the dump");
}

Result<void> CheckDumpProcess(pid_t pid, const std::vector<std::string>& dump_maps,
                              const std::string& proc_root) {
  const std::string path = proc_root + "/" + std::to_string(pid) + "/maps";
  std::ifstream in(path);
  if (!in) {
    const int error = errno;
    if (error == EACCES || error == EPERM) {
      return Fail(ErrorCode::kPermissionDenied,
                  Flag(pid) + "cannot read " + path + ": " + std::strerror(error));
    }
    return Fail(ErrorCode::kNotFound,
                Flag(pid) + "no process with pid " + std::to_string(pid) +
                    " (it has exited?); leave --pid out to read the dump's binaries by path");
  }
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return CompareDumpWithProcess(pid, report::symbolize::ParseMemoryMap(dump_maps).mappings,
                                report::symbolize::ParseMemoryMap(lines).mappings);
}

Result<void> CheckMetricHasData(const report::HeapProfile& profile, report::Metric metric,
                                const std::string& dump_path) {
  if (metric != report::Metric::kAllocSpace && metric != report::Metric::kAllocObjects) {
    return {};
  }
  if (profile.has_alloc) return {};
  const std::string flag =
      metric == report::Metric::kAllocSpace ? "--alloc-space" : "--alloc-objects";
  if (profile.format == report::DumpFormat::kGperftoolsHeapSample) {
    return Fail(ErrorCode::kFailedPrecondition,
                flag + ": " + dump_path +
                    " is tcmalloc's sampled heap, which has no allocation counts; gperftools' "
                    "heap profiler (HEAPPROFILE=...) records them");
  }
  return Fail(ErrorCode::kFailedPrecondition,
              flag + ": " + dump_path +
                  " has no allocation counts (they are all zero): jemalloc keeps them only when "
                  "started with prof_accum:true, e.g. MALLOC_CONF=prof_accum:true memprofctl run "
                  "-- CMD; its in-use figures (the default, or --inuse-objects) are there");
}

}  // namespace memprof::report
