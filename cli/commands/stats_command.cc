#include "cli/commands/stats_command.h"

#include <string>

#include "cli/commands/profiling_format.h"
#include "cli/human_format.h"
#include "cli/text_table.h"

namespace memprof::cli {
namespace {

using memprof::v1::StatsResponse;

memprof::v1::RawStatsFormat RequestedFormat(const StatsOptions& options) {
  if (options.raw) return memprof::v1::RAW_STATS_FORMAT_TEXT;
  if (options.target.json) return memprof::v1::RAW_STATS_FORMAT_JSON;
  return memprof::v1::RAW_STATS_FORMAT_NONE;
}

Result<nlohmann::json> ParseJemallocStats(const std::string& raw) {
  nlohmann::json parsed = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Fail(ErrorCode::kInternal,
                "the agent returned jemalloc statistics that are not valid JSON (" +
                    std::to_string(raw.size()) + " bytes); try `memprofctl stats --raw`");
  }
  // malloc_stats_print wraps everything in {"jemalloc": {...}}; unwrap it so
  // scripts read .jemalloc.stats.allocated rather than .jemalloc.jemalloc....
  if (parsed.size() == 1 && parsed.contains("jemalloc") && parsed["jemalloc"].is_object()) {
    return std::move(parsed["jemalloc"]);
  }
  return parsed;
}

}  // namespace

CLI::App* RegisterStatsCommand(CLI::App& app, StatsOptions& options) {
  CLI::App* cmd = app.add_subcommand("stats", "Show allocator statistics");
  AddPidOption(*cmd, options.target);
  CLI::Option* json = AddJsonFlag(*cmd, options.target.json);
  CLI::Option* raw = cmd->add_flag(
      "--raw", options.raw, "Print the allocator's own text report verbatim (malloc_stats_print)");
  json->excludes(raw);
  cmd->footer(
      "Examples:\n"
      "  memprofctl stats --pid 1234\n"
      "  memprofctl stats --pid 1234 --json | jq .jemalloc.stats\n"
      "  memprofctl stats --pid 1234 --raw\n");
  return cmd;
}

Result<void> RunStats(const StatsOptions& options, TargetDiscovery& discovery,
                      ProfileClient& client, std::ostream& out) {
  auto target = discovery.Resolve(options.target.selector());
  if (!target) return Fail(target.error());
  memprof::v1::StatsRequest request;
  request.set_raw_format(RequestedFormat(options));
  auto stats = client.Stats(*target, request);
  if (!stats) return Fail(stats.error());
  if (options.raw) {
    out << stats->raw();
  } else if (options.target.json) {
    auto json = StatsToJson(*stats, target->pid);
    if (!json) return Fail(json.error());
    out << json->dump(2) << '\n';
  } else {
    PrintStats(*stats, out);
  }
  return {};
}

double FragmentationRatio(const memprof::v1::StatsSummary& summary) {
  if (summary.active() == 0 || summary.allocated() >= summary.active()) return 0.0;
  return static_cast<double>(summary.active() - summary.allocated()) /
         static_cast<double>(summary.active());
}

Result<nlohmann::json> StatsToJson(const StatsResponse& stats, pid_t pid) {
  const auto& s = stats.summary();
  nlohmann::json json = {
      {"pid", pid},
      {"allocator", AllocatorName(stats.allocator())},
      {"allocated", s.allocated()},
      {"active", s.active()},
      {"metadata", s.metadata()},
      {"resident", s.resident()},
      {"mapped", s.mapped()},
      {"retained", s.retained()},
      {"rss_bytes", stats.rss_bytes()},
      {"fragmentation_ratio", FragmentationRatio(s)},
  };
  if (stats.allocator() == memprof::v1::ALLOCATOR_KIND_JEMALLOC) {
    auto jemalloc = ParseJemallocStats(stats.raw());
    if (!jemalloc) return Fail(jemalloc.error());
    json["jemalloc"] = std::move(*jemalloc);
  }
  return json;
}

void PrintStats(const StatsResponse& stats, std::ostream& out) {
  const auto& s = stats.summary();
  TextTable table;
  table.SetAlign(1, TextTable::Align::kRight);
  table.AddRow({"allocated", FormatBytes(s.allocated()), "in live allocations"});
  table.AddRow({"active", FormatBytes(s.active()), "in pages holding live allocations"});
  table.AddRow({"resident", FormatBytes(s.resident()), "allocator memory resident in RAM"});
  table.AddRow({"mapped", FormatBytes(s.mapped()), "mapped by the allocator"});
  table.AddRow({"retained", FormatBytes(s.retained()), "kept for reuse, not returned to the OS"});
  table.AddRow({"metadata", FormatBytes(s.metadata()), "the allocator's own bookkeeping"});
  table.AddRow({"RSS", FormatBytes(stats.rss_bytes()), "whole process resident set"});
  table.AddRow(
      {"fragmentation", FormatPercent(FragmentationRatio(s)), "(active - allocated) / active"});
  out << "allocator: " << AllocatorName(stats.allocator()) << '\n';
  table.Print(out);
}

}  // namespace memprof::cli
