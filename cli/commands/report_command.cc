#include "cli/commands/report_command.h"

#include <malloc.h>

#include <memory>
#include <ostream>

#include "cli/collect/report_writer.h"
#include "cli/commands/option_validators.h"
#include "cli/commands/target_flags.h"

namespace memprof::cli {
namespace {

constexpr uint64_t kMaxTop = 1000000;
// glibc gives the top of its heap back to the kernel above this.
constexpr int kNoTrimBelow = 1 << 30;

bool MetricChosen(const ReportOptions& options) {
  return options.inuse_space || options.inuse_objects || options.alloc_space ||
         options.alloc_objects;
}

report::Metric MetricOf(const ReportOptions& options) {
  if (options.inuse_objects) return report::Metric::kInuseObjects;
  if (options.alloc_space) return report::Metric::kAllocSpace;
  if (options.alloc_objects) return report::Metric::kAllocObjects;
  return report::Metric::kInuseSpace;
}

void AddSelectionOptions(CLI::App& cmd, ReportOptions& options) {
  CLI::Option* space = cmd.add_flag(
      "--inuse-space", options.inuse_space,
      "Live bytes (the default for heap dumps; allocation profiles: what survived the window)");
  CLI::Option* objects =
      cmd.add_flag("--inuse-objects", options.inuse_objects, "Count live objects, not bytes");
  CLI::Option* alloc_space = cmd.add_flag(
      "--alloc-space", options.alloc_space,
      "Bytes allocated since start (needs prof_accum:true; the default for allocation profiles)");
  CLI::Option* alloc_objects = cmd.add_flag("--alloc-objects", options.alloc_objects,
                                            "Objects allocated since start (needs prof_accum:true)");
  space->excludes(objects)->excludes(alloc_space)->excludes(alloc_objects);
  objects->excludes(alloc_space)->excludes(alloc_objects);
  alloc_space->excludes(alloc_objects);
  // One value per --base (repeat it for several), so that
  // `report --base old.heap new.heap` keeps meaning what it always did.
  cmd.add_option("--base", options.bases,
                 "Subtract this earlier dump (repeat for several: their sum): what grew and shrank "
                 "(svg: a diff flame graph)")
      ->type_name("DUMP")
      ->type_size(1)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false)
      ->check(ExistingFileValidator());
  cmd.add_option("--focus", options.focus, "Keep only stacks with a frame matching REGEX")
      ->type_name("REGEX");
  cmd.add_option("--ignore", options.ignore, "Drop stacks with a frame matching REGEX")
      ->type_name("REGEX");
}

void AddPresentationOptions(CLI::App& cmd, ReportOptions& options) {
  cmd.add_option("--top", options.top, "Show at most N functions (text, json; 1 to 1000000)")
      ->type_name("N")
      ->check(CountValidator(1, kMaxTop, "number"));
  cmd.add_flag("--show-bytes", options.show_bytes, "Bytes instead of MiB in the text table");
  cmd.add_flag("--cum", options.cum, "Sort the text table by cumulative value");
  cmd.add_flag("--lines", options.lines, "Name frames with file:line and inlined functions");
  cmd.add_flag("--nearest-symbol", options.nearest_symbol,
               "Name a frame no symbol covers after the closest symbol below it, marked as a "
               "guess (name+0x2a?), as jeprof does; default: module+0xOFFSET");
  cmd.add_option("--pid", options.pid,
                 "The live process the dump came from: read its binaries through /proc/<pid> "
                 "(containers, deleted or replaced binaries)")
      ->type_name("PID")
      ->check(PidValidator());
  cmd.add_option("--sysroot", options.sysroot,
                 "Look the dump's binaries up under this directory (a copy of the target's root)")
      ->type_name("DIR")
      ->check(ExistingDirectoryValidator());
  cmd.add_flag("--no-cache", options.no_cache,
               "Read every file afresh instead of keeping plain copies of compressed debug files "
               "and sorted symbol tables in $XDG_CACHE_HOME/memprof (default ~/.cache/memprof)");
}

}  // namespace

CLI::App* RegisterReportCommand(CLI::App& app, ReportOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "report", "Analyse a heap profile: top functions, flame graph, pprof (no target needed)");
  cmd->add_option("DUMP", options.dumps,
                  "Heap profile(s) written by `memprofctl dump` (heap_v2); several are merged "
                  "(summed), or ranked over time with --trend; or one allocation profile "
                  "(`memprofctl profile --allocations`)")
      ->required()
      ->check(ExistingFileValidator());
  cmd->add_option("-f,--format", options.format, "text (default), collapsed, pprof, svg or json")
      ->check(ChoiceValidator(report::FormatNames(), "report format"))
      ->type_name("FORMAT");
  cmd->add_flag("--json", options.json, "The same as --format json");
  CLI::Option* out =
      cmd->add_option("-o,--out", options.out, "Write here (atomically) instead of stdout")
          ->type_name("FILE|-");
  AddForceFlag(*cmd, options.force, out);
  cmd->add_flag("--trend", options.trend,
                "Order the dumps by time and rank functions by steady growth (needs 3 or more; "
                "text or json)");
  cmd->add_flag("--lifetimes", options.lifetimes,
                "Allocation profiles: per allocation site, bytes allocated, freed and survived, "
                "the allocation rate and the lifetimes of freed objects (text or json)");
  AddSelectionOptions(*cmd, options);
  AddPresentationOptions(*cmd, options);
  cmd->footer(
      "Values are estimates unsampled exactly as jeprof does; frames are named from the\n"
      "binaries recorded in the dump (debug info via build ID and /usr/lib/debug).\n\n"
      "Examples:\n"
      "  memprofctl report profile.heap --top 20\n"
      "  memprofctl report profile.heap --format svg -o heap.svg     # open in a browser\n"
      "  memprofctl report profile.heap --format pprof -o heap.pb.gz # pprof -http=: heap.pb.gz\n"
      "  memprofctl report after.heap --base before.heap             # what grew\n"
      "  memprofctl report after.heap --base before.heap -f svg -o d.svg  # grew and shrank\n"
      "  memprofctl report heaps/*.heap                              # all pods, summed\n"
      "  memprofctl report new/*.heap --base old1.heap --base old2.heap  # what grew, fleet-wide\n"
      "  memprofctl report --trend heaps/web1-1234-*.heap            # what grows steadily\n"
      "  memprofctl report profile.heap --format collapsed | flamegraph.pl > heap.svg\n"
      "  memprofctl report allocs.prof                              # top allocating functions\n"
      "  memprofctl report allocs.prof --inuse-space -f svg -o s.svg  # what survived the window\n"
      "  memprofctl report allocs.prof --lifetimes                  # how long objects live\n");
  return cmd;
}

namespace {

// --format, or --json, which is --format json.
Result<report::Format> FormatOf(const ReportOptions& options) {
  if (options.json && !options.format.empty() && options.format != "json") {
    return Fail(
        ErrorCode::kInvalidArgument,
        "report: --json is --format json; it cannot be combined with --format " + options.format);
  }
  const std::string name = options.json ? "json" : options.format.empty() ? "text" : options.format;
  auto format = report::ParseFormat(name);
  if (!format) {
    return Fail(ErrorCode::kInvalidArgument,
                "unknown report format '" + name + "' (valid: text, collapsed, pprof, svg, json)");
  }
  return *format;
}

// --lifetimes prints a table per site: no stacks to draw or to write as pprof.
Result<void> CheckLifetimesOptions(const report::ReportRequest& request) {
  if (!request.lifetimes) return {};
  if (request.format != report::Format::kText && request.format != report::Format::kJson) {
    return Fail(ErrorCode::kInvalidArgument,
                "report: --lifetimes prints a table per allocation site, in text or json; it has "
                "no " + std::string(report::FormatNames()[static_cast<size_t>(request.format)]) +
                    " form (drop --lifetimes for flame graphs and pprof)");
  }
  if (request.trend) {
    return Fail(ErrorCode::kInvalidArgument,
                "report: --lifetimes reads one allocation profile; --trend ranks heap dumps");
  }
  return {};
}

}  // namespace

Result<report::ReportRequest> MakeReportRequest(const ReportOptions& options) {
  auto format = FormatOf(options);
  if (!format) return Fail(format.error());
  report::ReportRequest request;
  if (options.dumps.empty()) return Fail(ErrorCode::kInvalidArgument, "report: DUMP is required");
  request.dump_path = options.dumps.front();
  request.more_dump_paths.assign(options.dumps.begin() + 1, options.dumps.end());
  if (!options.bases.empty()) {
    request.base_path = options.bases.front();
    request.more_base_paths.assign(options.bases.begin() + 1, options.bases.end());
  }
  request.format = *format;
  request.metric = MetricOf(options);
  request.metric_chosen = MetricChosen(options);
  request.focus = options.focus;
  request.ignore = options.ignore;
  if (options.top > 0) request.top = options.top;
  request.show_bytes = options.show_bytes;
  request.sort_by_cum = options.cum;
  request.lines = options.lines;
  request.nearest_symbol = options.nearest_symbol;
  if (options.pid > 0) request.pid = options.pid;
  request.sysroot = options.sysroot;
  request.use_caches = !options.no_cache;
  request.trend = options.trend;
  request.lifetimes = options.lifetimes;
  if (auto ok = CheckLifetimesOptions(request); !ok) return Fail(ok.error());
  return request;
}

Result<void> RunReport(const ReportOptions& options, const Console& console,
                       bool stdout_is_terminal, bool stderr_redraws) {
  auto request = MakeReportRequest(options);
  if (!request) return Fail(request.error());
  request->process_ends_after = true;
  // Memory a report frees (its stacks, once interned) is reused by what it
  // builds next; trimmed, it would come back as fresh pages to clear.
  mallopt(M_TRIM_THRESHOLD, kNoTrimBelow);
  return WriteReport(*request, ReportOutput{options.out, ExistingFileFor(options.force)}, console,
                     stdout_is_terminal, stderr_redraws);
}

namespace {

class ReportCommand final : public Command {
 public:
  CLI::App* Register(CLI::App& app) override { return RegisterReportCommand(app, options_); }
  bool talks_to_agents() const override { return false; }
  Result<void> Run(const CommandContext& context) override {
    return RunReport(options_, context.console, context.env.stdout_is_terminal,
                     context.env.stderr_redraws && !context.console.quiet);
  }

 private:
  ReportOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeReportCommand() { return std::make_unique<ReportCommand>(); }

}  // namespace memprof::cli
