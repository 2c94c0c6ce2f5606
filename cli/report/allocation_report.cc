#include "cli/report/allocation_report.h"

#include <utility>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/aggregate/lifetimes.h"
#include "cli/report/parse/allocation_profile_parser.h"
#include "cli/report/render/lifetimes_report.h"

namespace memprof::report {

Result<void> CheckAllocationRequest(const ReportRequest& request) {
  const std::string& path = request.dump_path;
  if (!request.more_dump_paths.empty() || !request.base_path.empty() ||
      !request.more_base_paths.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                path + " is an allocation profile, which is reported alone: it cannot be summed "
                       "with other profiles or compared with --base (its records are a window's "
                       "allocations, not a heap); report each on its own");
  }
  if (request.trend) {
    return Fail(ErrorCode::kInvalidArgument,
                "--trend ranks heap dumps taken over time; " + path +
                    " is an allocation profile (try --lifetimes)");
  }
  return {};
}

Result<void> LifetimesNeedAllocationProfile(const std::string& path) {
  return Fail(ErrorCode::kInvalidArgument,
              "--lifetimes needs an allocation profile (memprofctl profile --allocations "
              "--out FILE); " + path + " is not one (its first line is not 'memprof allocation "
              "profile v1')");
}

Result<LoadedAllocationProfile> LoadAllocationProfile(const std::string& path) {
  auto parsed = report::parse::ParseAllocationProfileFile(path);
  if (!parsed) return Fail(parsed.error());
  LoadedAllocationProfile loaded{std::move(*parsed), {}};
  loaded.samples = report::aggregate::ToHeapProfile(loaded.input);
  return loaded;
}

report::Metric AllocationMetric(const ReportRequest& request) {
  return request.metric_chosen ? request.metric : report::Metric::kAllocSpace;
}

void SetAllocationPprofOptions(const report::AllocationSummary& summary,
                               report::pprof::PprofOptions& options) {
  constexpr int64_t kNanosPerMilli = 1000000;
  options.allocation_profile = true;
  options.time_nanos = summary.header.window_start_unix_ms * kNanosPerMilli;
  options.duration_nanos = static_cast<int64_t>(summary.header.window_ns());
}

Result<void> WriteLifetimes(const ReportRequest& request, const LoadedAllocationProfile& loaded,
                            report::pprof::ParallelSymbolizer& symbolizer, std::ostream& out) {
  const report::HeapProfile& profile = loaded.samples.profile;
  const report::aggregate::InternedAddresses interned =
      report::aggregate::InternLookupAddresses(profile);
  symbolizer.ResolveAll(interned.addresses);
  const std::vector<std::string> names =
      report::aggregate::FlatFunctionNames(profile, symbolizer, interned, request.lines);
  const std::vector<report::aggregate::LifetimeSite> sites =
      report::aggregate::ComputeLifetimes(loaded.input, loaded.samples, names);
  if (request.format == Format::kJson) {
    return report::render::WriteLifetimesJson(loaded.samples.summary, sites, request.top, out);
  }
  return report::render::WriteLifetimesText(loaded.samples.summary, sites, request.top, out);
}

}  // namespace memprof::report
