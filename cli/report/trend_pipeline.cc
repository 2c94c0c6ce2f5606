#include "cli/report/trend_pipeline.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/merge/profile_merge.h"
#include "cli/report/pprof/parallel_symbolizer.h"
#include "cli/report/profile_loader.h"
#include "cli/report/report_symbolizer.h"
#include "cli/report/symbolize/memory_map.h"
#include "cli/report/trend/trend_report.h"

namespace memprof::report {
namespace {

Result<void> CheckTrendRequest(const ReportRequest& request) {
  const size_t dumps = 1 + request.more_dump_paths.size();
  if (dumps < report::trend::kMinTrendDumps) {
    return Fail(ErrorCode::kInvalidArgument,
                "--trend needs at least " + std::to_string(report::trend::kMinTrendDumps) +
                    " dumps to fit a line, got " + std::to_string(dumps));
  }
  if (!request.base_path.empty()) {
    return Fail(ErrorCode::kInvalidArgument, "--trend cannot be combined with --base");
  }
  if (request.format != Format::kText && request.format != Format::kJson) {
    // FormatNames() lists the formats in the enum's order.
    const std::string& name = FormatNames().at(static_cast<size_t>(request.format));
    return Fail(ErrorCode::kInvalidArgument, "--trend writes text or json, not '" + name + "'");
  }
  return {};
}

// The dumps and their times, oldest first; equal times keep the order given.
Result<std::vector<report::trend::TrendDump>> DumpsInTimeOrder(const ReportRequest& request) {
  std::vector<report::trend::TrendDump> dumps;
  std::vector<std::string> paths = {request.dump_path};
  paths.insert(paths.end(), request.more_dump_paths.begin(), request.more_dump_paths.end());
  for (const std::string& path : paths) {
    auto time = report::trend::ReadDumpTime(path);
    if (!time) return Fail(time.error());
    dumps.push_back({path, *time});
  }
  std::stable_sort(dumps.begin(), dumps.end(), [](const auto& a, const auto& b) {
    return a.time.seconds < b.time.seconds;
  });
  return dumps;
}

std::vector<uint64_t> AllLookupAddresses(const std::vector<report::HeapProfile>& profiles) {
  std::vector<uint64_t> addresses;
  for (const report::HeapProfile& profile : profiles) {
    std::vector<uint64_t> mine = report::pprof::DistinctLookupAddresses(profile);
    addresses.insert(addresses.end(), mine.begin(), mine.end());
  }
  return addresses;
}

// Each dump's text-report rows, named by one symbolizer over the shared space.
Result<std::vector<report::trend::Snapshot>> Snapshots(const ReportRequest& request,
                                               const std::vector<report::trend::TrendDump>& dumps,
                                               report::merge::SharedSpace space) {
  const auto map = report::symbolize::ParseMemoryMap(space.mapped_libraries);
  auto symbolizer =
      MakeReportSymbolizer(request, map.mappings, AllLookupAddresses(space.profiles));
  if (!symbolizer) return Fail(symbolizer.error());
  const report::aggregate::AggregateOptions aggregate{request.metric, request.focus,
                                                      request.ignore};
  std::vector<report::trend::Snapshot> snapshots;
  for (size_t i = 0; i < dumps.size(); ++i) {
    auto aggregation =
        report::aggregate::AggregateProfile(space.profiles[i], **symbolizer, aggregate);
    if (!aggregation) return Fail(aggregation.error());
    snapshots.push_back({dumps[i].time.seconds, std::move(aggregation->functions)});
  }
  return snapshots;
}

}  // namespace

Result<void> RunTrendPipeline(const ReportRequest& request, std::ostream& out) {
  if (auto checked = CheckTrendRequest(request); !checked) return checked;
  auto dumps = DumpsInTimeOrder(request);
  if (!dumps) return Fail(dumps.error());
  std::vector<std::string> paths;
  for (const report::trend::TrendDump& dump : *dumps) paths.push_back(dump.path);
  auto profiles = LoadProfiles(paths);
  if (!profiles) return Fail(profiles.error());
  auto snapshots =
      Snapshots(request, *dumps, report::merge::IntoOneAddressSpace(std::move(*profiles)));
  if (!snapshots) return Fail(snapshots.error());
  auto rows = report::trend::ComputeTrend(*snapshots);
  if (!rows) return Fail(rows.error());
  const report::trend::TrendResult result{request.metric, std::move(*dumps), std::move(*rows)};
  const report::trend::TrendReportOptions options{request.show_bytes, request.top};
  if (request.format == Format::kJson) return report::trend::RenderTrendJson(result, options, out);
  return report::trend::RenderTrendText(result, options, out);
}

}  // namespace memprof::report
