#include "cli/commands/stats_command.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cli/client/memory_figures.h"
#include "cli/client/profiling_format.h"
#include "cli/commands/option_validators.h"
#include "cli/commands/target_flags.h"
#include "cli/exporter/prometheus_renderer.h"
#include "cli/exporter/target_metrics.h"
#include "cli/io/human_format.h"
#include "cli/io/text_table.h"
#include "common/duration.h"
#include "common/json_schema_versions.h"

namespace memprof::cli {
namespace {

using memprof::v1::StatsResponse;

memprof::v1::RawStatsFormat RequestedFormat(StatsFormat format) {
  if (format == StatsFormat::kRaw) return memprof::v1::RAW_STATS_FORMAT_TEXT;
  if (format == StatsFormat::kJson) return memprof::v1::RAW_STATS_FORMAT_JSON;
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

// tcmalloc's properties under their names without the "generic." or
// "tcmalloc." prefix (snake_case JSON keys: "pageheap_free_bytes").
nlohmann::json TcmallocPropertiesToJson(const StatsResponse& stats) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : stats.allocator_properties()) {
    const size_t dot = name.find('.');
    out[dot == std::string::npos ? name : name.substr(dot + 1)] = value;
  }
  return out;
}

}  // namespace

CLI::App* RegisterStatsCommand(CLI::App& app, StatsOptions& options) {
  CLI::App* cmd = app.add_subcommand("stats", "Show allocator statistics");
  AddPidOption(*cmd, options.target);
  CLI::Option* json = AddJsonFlag(*cmd, options.target.json);
  CLI::Option* raw = cmd->add_flag(
      "--raw", options.raw, "Print the allocator's own text report verbatim (malloc_stats_print)");
  json->excludes(raw);
  cmd->add_option("-f,--format", options.format,
                  "table (default), json (= --json), raw (= --raw), or prometheus "
                  "(the text exposition format)")
      ->type_name("FORMAT")
      ->excludes(json)
      ->excludes(raw);
  CLI::Option* watch =
      cmd->add_option("--watch", options.watch,
                      "Read again every DURATION (1s to 1h) with the change since the last "
                      "reading: a live table on a terminal, else one JSON line per reading; "
                      "until Ctrl-C/SIGTERM (exit 0) or --count")
          ->check(DurationValidator(kMinStatsWatch, kMaxStatsWatch))
          ->type_name("DURATION");
  cmd->add_option("--count", options.count, "With --watch: stop after N readings (1 to 1000000)")
      ->check(CountValidator(1, kMaxStatsCount))
      ->type_name("N")
      ->needs(watch);
  cmd->footer(
      "Examples:\n"
      "  memprofctl stats --pid 1234\n"
      "  memprofctl stats --pid 1234 --json | jq .jemalloc.stats\n"
      "  memprofctl stats --pid 1234 --raw\n"
      "  memprofctl stats --pid 1234 --format prometheus > /var/lib/node_exporter/memprof.prom\n"
      "  memprofctl stats --pid 1234 --watch 2s              # live table; Ctrl-C to stop\n"
      "  memprofctl stats --pid 1234 --watch 10s --count 6 | jq .delta.allocated\n"
      "  memprofctl stats --all --format prometheus     # one exposition for every local agent\n");
  return cmd;
}

Result<StatsFormat> ResolveStatsFormat(const StatsOptions& options) {
  if (options.format.empty()) {
    if (options.raw) return StatsFormat::kRaw;
    return options.target.json ? StatsFormat::kJson : StatsFormat::kTable;
  }
  if (options.format == "table") return StatsFormat::kTable;
  if (options.format == "json") return StatsFormat::kJson;
  if (options.format == "raw") return StatsFormat::kRaw;
  if (options.format == "prometheus") return StatsFormat::kPrometheus;
  return Fail(ErrorCode::kInvalidArgument, "unknown stats format '" + options.format +
                                               "' (valid: table, json, raw, prometheus)");
}

Result<StatsWatchPlan> MakeStatsWatchPlan(const StatsOptions& options, bool stdout_is_terminal,
                                          bool stdout_redraws) {
  auto format = ResolveStatsFormat(options);
  if (!format) return Fail(format.error());
  auto every = ParseDuration(options.watch, kMinStatsWatch, kMaxStatsWatch);
  if (!every) return Fail(every.error());
  StatsWatchPlan plan;
  plan.every = *every;
  plan.count = options.count;
  switch (*format) {
    case StatsFormat::kJson:
      plan.output = StatsWatchPlan::Output::kJsonLines;
      return plan;
    case StatsFormat::kTable:
      if (stdout_is_terminal) {
        plan.output = stdout_redraws ? StatsWatchPlan::Output::kLiveTable
                                     : StatsWatchPlan::Output::kTables;
      } else {
        plan.output = options.format.empty() ? StatsWatchPlan::Output::kJsonLines
                                             : StatsWatchPlan::Output::kTables;
      }
      return plan;
    case StatsFormat::kRaw:
    case StatsFormat::kPrometheus:
      break;
  }
  return Fail(ErrorCode::kInvalidArgument,
              "--watch shows a table or JSON lines; it cannot be combined with --format " +
                  (options.format.empty() ? std::string("raw") : options.format) +
                  " (valid with --watch: table, json)");
}

Result<void> RunStats(const StatsOptions& options, TargetDiscovery& discovery,
                      ProfileClient& client, std::ostream& out) {
  auto format = ResolveStatsFormat(options);
  if (!format) return Fail(format.error());
  auto target = discovery.Resolve(options.target.selector());
  if (!target) return Fail(target.error());
  if (*format == StatsFormat::kPrometheus) {
    auto metrics = QueryTargetMetrics(*target, client);
    if (!metrics) return Fail(metrics.error());
    out << RenderPrometheus({*metrics});
    return {};
  }
  memprof::v1::StatsRequest request;
  request.set_raw_format(RequestedFormat(*format));
  auto stats = client.Stats(*target, request);
  if (!stats) return Fail(stats.error());
  if (*format == StatsFormat::kRaw) {
    out << stats->raw();
  } else if (*format == StatsFormat::kJson) {
    auto json = StatsToJson(*stats, target->pid);
    if (!json) return Fail(json.error());
    out << json->dump(2) << '\n';
  } else {
    PrintStats(*stats, out);
  }
  return {};
}

Result<void> RunStatsCommand(const StatsOptions& options, TargetDiscovery& discovery,
                             ProfileClient& client, std::ostream& out, bool stdout_is_terminal,
                             bool stdout_redraws, const std::stop_token& stop) {
  if (options.watch.empty()) return RunStats(options, discovery, client, out);
  auto plan = MakeStatsWatchPlan(options, stdout_is_terminal, stdout_redraws);
  if (!plan) return Fail(plan.error());
  auto target = discovery.Resolve(options.target.selector());
  if (!target) return Fail(target.error());
  return RunStatsWatch(*plan, *target, discovery, client, out, stop);
}

Result<void> RunStatsPrometheusOnTargets(const TargetSelection& selection,
                                         const MultiTargetPlan& plan,
                                         const TargetDiscovery& discovery,
                                         const StoppableClientFactory& make_client,
                                         const Console& console, const std::stop_token& stop) {
  std::mutex mutex;
  std::vector<TargetMetrics> rows;
  const TargetTask task = [&](const Target& target, ProfileClient& client, const Console&,
                              const std::stop_token&) -> Result<void> {
    auto metrics = QueryTargetMetrics(target, client);
    TargetMetrics row;
    if (metrics) {
      row = *metrics;
    } else {
      row.pid = target.pid;
      row.command = target.command;
    }
    std::lock_guard lock(mutex);
    rows.push_back(std::move(row));
    return metrics ? Result<void>() : Fail(metrics.error());
  };
  MultiTargetPlan quiet = plan;
  quiet.json = false;  // the exposition is the output
  const Console errors_only{console.err, console.err};
  auto result = RunOnTargets(selection, quiet, discovery, make_client, task, errors_only, stop);
  if (!result && result.error().code == ErrorCode::kCancelled) return result;
  std::sort(rows.begin(), rows.end(),
            [](const TargetMetrics& a, const TargetMetrics& b) { return a.pid < b.pid; });
  console.out << RenderPrometheus(rows);
  return result;
}

double FragmentationRatio(const memprof::v1::StatsSummary& summary) {
  if (summary.active() == 0 || summary.allocated() >= summary.active()) return 0.0;
  return static_cast<double>(summary.active() - summary.allocated()) /
         static_cast<double>(summary.active());
}

Result<nlohmann::json> StatsToJson(const StatsResponse& stats, pid_t pid) {
  const auto& s = stats.summary();
  nlohmann::json json = {
      {"schema_version", kStatsJsonVersion},
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
  if (stats.allocator() == memprof::v1::ALLOCATOR_KIND_TCMALLOC) {
    json["tcmalloc"] = TcmallocPropertiesToJson(stats);
  }
  return json;
}

void PrintStats(const StatsResponse& stats, std::ostream& out) {
  const MemoryFigures figures = FiguresOf(stats);
  TextTable table;
  table.SetAlign(1, TextTable::Align::kRight);
  for (const FigureField& field : FigureFields()) {
    table.AddRow({field.label, FormatBytes(figures.*field.value), field.meaning});
  }
  table.AddRow({"fragmentation", FormatPercent(FragmentationRatio(stats.summary())),
                "(active - allocated) / active"});
  out << "allocator: " << AllocatorName(stats.allocator()) << '\n';
  table.Print(out);
  if (stats.allocator_properties().empty()) return;
  // The allocator's own figures (tcmalloc's properties), sorted by name.
  std::map<std::string, uint64_t> sorted(stats.allocator_properties().begin(),
                                         stats.allocator_properties().end());
  out << AllocatorName(stats.allocator()) << " properties:\n";
  TextTable properties;
  properties.SetAlign(1, TextTable::Align::kRight);
  for (const auto& [name, value] : sorted) {
    const bool bytes = name.ends_with("_bytes") || name.ends_with("_size");  // generic.heap_size
    properties.AddRow({name, bytes ? FormatBytes(value) : std::to_string(value)});
  }
  properties.Print(out);
}

namespace {

class StatsCommand final : public Command {
 public:
  CLI::App* Register(CLI::App& app) override { return RegisterStatsCommand(app, options_); }
  TargetOptions* target_options() override { return &options_.target; }
  SignalEnd signal_end() const override {
    return options_.watch.empty() ? SignalEnd::kDies : SignalEnd::kEndsNormally;
  }
  Result<void> Run(const CommandContext& context) override {
    return RunStatsCommand(options_, *context.discovery, *context.client, context.console.out,
                           context.env.stdout_is_terminal, context.env.stdout_redraws,
                           context.cancel);
  }
  Result<void> CheckManyTargets() const override {
    if (!options_.watch.empty()) return Fail(FollowsOneTarget("--watch"));
    return {};
  }
  Result<void> RunOnTarget(const Target& target, const CommandContext& context) const override {
    return RunStats(ForTarget(options_, target), *context.discovery, *context.client,
                    context.console.out);
  }
  // --format prometheus: one exposition for all targets.
  Result<void> RunOnMany(const TargetSelection& selection, const MultiTargetPlan& plan,
                         const CommandContext& context) const override {
    if (options_.format != "prometheus") return Command::RunOnMany(selection, plan, context);
    return RunStatsPrometheusOnTargets(selection, plan, *context.discovery,
                                       context.env.make_client, context.console, context.cancel);
  }

 private:
  StatsOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeStatsCommand() { return std::make_unique<StatsCommand>(); }

}  // namespace memprof::cli
