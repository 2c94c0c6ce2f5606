#include "cli/commands/status_command.h"

#include <memory>
#include <string>
#include <vector>

#include "cli/client/capture_format.h"
#include "cli/client/profiling_format.h"
#include "cli/commands/target_flags.h"
#include "cli/io/human_format.h"
#include "cli/io/text_table.h"
#include "cli/io/user_name.h"
#include "common/json_schema_versions.h"

namespace memprof::cli {
namespace {

using memprof::v1::StatusResponse;

std::string YesNo(bool value) { return value ? "yes" : "no"; }

std::string CommandLine(const StatusResponse& status) {
  const std::string title =
      ProcessTitle({status.command_line().begin(), status.command_line().end()});
  return title.empty() ? status.executable() : title;
}

std::string ActiveText(const StatusResponse& status, std::chrono::system_clock::time_point now) {
  if (!status.profiling_active()) {
    // tcmalloc samples anyway; inactive means the agent serves no new samples.
    return status.allocator() == memprof::v1::ALLOCATOR_KIND_TCMALLOC ? "no (memprof activation)"
                                                                      : "no (prof.active)";
  }
  return "yes, " + DescribeWindowEnd(status.window_end_unix_ms(), now);
}

std::string AllocationWindowText(const memprof::v1::AllocationWindowState& window,
                                 std::chrono::system_clock::time_point now) {
  std::string text = "none open";
  if (window.open_window() != 0) {
    text = "#" + std::to_string(window.open_window()) + " open, " +
           DescribeWindowEnd(window.window_end_unix_ms(), now) + " (bound " +
           std::to_string(window.record_bound()) + " records)";
  }
  if (window.held_profile() != 0) {
    text += "; #" + std::to_string(window.held_profile()) + "'s profile waits to be fetched";
  }
  return text;
}

std::string MemoryLimitText(const StatusResponse& status) {
  if (status.has_memory_limit()) return DescribeMemoryLimit(status.memory_limit());
  if (!status.memory_limit_error().empty()) return "unknown: " + status.memory_limit_error();
  return "none (no memory cgroup limit below \"max\")";
}

std::string StartedByText(const StatusResponse& status) {
  if (status.started_by() == "preload") return "preloaded (LD_PRELOAD)";
  if (status.started_by() == "linked") return "linked into the program (memprof_agent_start)";
  if (status.started_by() == "attach") return "attached (memprofctl attach)";
  return status.started_by();
}

// Who samples, and for memprof's own sampler what its profiles cover.
std::string SamplerText(const StatusResponse& status) {
  if (status.sampler() != "memprof") return status.sampler() + "'s own";
  std::string text = "memprof's own (the allocator cannot sample)";
  if (status.sampler_since_unix_ms() > 0) {
    text += "; profiles hold what was allocated since " +
            FormatLocalTime(status.sampler_since_unix_ms());
  } else {
    text += "; profiles will hold what is allocated from activation on";
  }
  return text;
}

std::string StartedText(const StatusResponse& status, std::chrono::system_clock::time_point now) {
  if (status.agent_started_unix_ms() == 0) return "unknown";
  return FormatLocalTime(status.agent_started_unix_ms()) + " (" +
         FormatRelative(status.agent_started_unix_ms(), now) + ")";
}

}  // namespace

CLI::App* RegisterStatusCommand(CLI::App& app, StatusOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "status", "Show the process, its allocator and whether heap profiling is possible/active");
  AddPidOption(*cmd, options.target);
  AddJsonFlag(*cmd, options.target.json);
  cmd->footer(
      "Examples:\n"
      "  memprofctl status --pid 1234\n"
      "  memprofctl status --pid 1234 --json | jq .profiling_active\n"
      "  memprofctl status --all --json | jq -c '{target, ok, active: .result.profiling_active}'\n");
  return cmd;
}

Result<void> RunStatus(const StatusOptions& options, TargetDiscovery& discovery,
                       ProfileClient& client, std::ostream& out) {
  auto target = discovery.Resolve(options.target.selector());
  if (!target) return Fail(target.error());
  auto status = client.Status(*target);
  if (!status) return Fail(status.error());
  if (options.target.json) {
    out << StatusToJson(*status, *target).dump(2) << '\n';
  } else {
    PrintStatus(*status, *target, std::chrono::system_clock::now(), out);
  }
  return {};
}

nlohmann::json StatusToJson(const StatusResponse& status, const Target& target) {
  nlohmann::json json = {
      {"schema_version", kStatusJsonVersion},
      {"pid", target.pid},
      {"executable", status.executable()},
      {"command_line",
       std::vector<std::string>(status.command_line().begin(), status.command_line().end())},
      {"uid", status.uid()},
      {"agent_version", status.agent_version()},
      {"allocator", AllocatorName(status.allocator())},
      {"allocator_version", status.allocator_version()},
      {"profiling_supported", status.profiling_supported()},
      {"profiling_enabled", status.profiling_enabled()},
      {"profiling_active", status.profiling_active()},
      {"sample_interval_bytes", status.sample_interval_bytes()},
      {"malloc_conf", status.malloc_conf()},
      {"window_end_unix_ms", status.window_end_unix_ms()},
      {"dumps_served", status.dumps_served()},
      {"rss_bytes", status.rss_bytes()},
      {"agent_started_unix_ms", status.agent_started_unix_ms()},
      {"activation_generation", status.activation_generation()},
      {"capture", CaptureStateToJson(status.capture())},
      {"socket", target.socket_path},
      // Unset reads as all zero and "": a key's type never changes.
      {"memory_limit", MemoryLimitToJson(status.memory_limit())},
      {"memory_limit_error", status.memory_limit_error()},
      {"started_by", status.started_by()},
      {"sampler", status.sampler()},
      {"sampler_since_unix_ms", status.sampler_since_unix_ms()},
      {"sampler_not_intercepted",
       std::vector<std::string>(status.sampler_not_intercepted().begin(),
                                status.sampler_not_intercepted().end())},
      {"allocation_window",
       {{"open_window", status.allocation_window().open_window()},
        {"window_end_unix_ms", status.allocation_window().window_end_unix_ms()},
        {"record_bound", status.allocation_window().record_bound()},
        {"held_profile", status.allocation_window().held_profile()}}},
  };
  return json;
}

void PrintStatus(const StatusResponse& status, const Target& target,
                 std::chrono::system_clock::time_point now, std::ostream& out) {
  TextTable table;
  table.AddRow({"pid:", std::to_string(target.pid)});
  table.AddRow({"command:", CommandLine(status)});
  table.AddRow({"executable:", status.executable()});
  table.AddRow({"user:", UserName(status.uid()) + " (uid " + std::to_string(status.uid()) + ")"});
  table.AddRow({"allocator:", AllocatorText(status.allocator(), status.allocator_version())});
  // What each line comes from, in the allocator's own terms.
  const bool tcmalloc = status.allocator() == memprof::v1::ALLOCATOR_KIND_TCMALLOC;
  table.AddRow({"profiling support:", YesNo(status.profiling_supported()) +
                                          (tcmalloc ? " (libtcmalloc's sampler)" : " (config.prof)")});
  table.AddRow({"profiling enabled:", YesNo(status.profiling_enabled()) +
                                          (tcmalloc ? " (TCMALLOC_SAMPLE_PARAMETER)" : " (opt.prof)")});
  table.AddRow({"profiling active:", ActiveText(status, now)});
  if (!status.sampler().empty()) table.AddRow({"sampler:", SamplerText(status)});
  for (const std::string& line : status.sampler_not_intercepted()) {
    table.AddRow({"", "not intercepted: " + line});
  }
  if (status.activation_generation() != 0) {  // 0: an agent that does not count
    table.AddRow({"activation gen:", std::to_string(status.activation_generation())});
  }
  table.AddRow({"sample interval:", status.sample_interval_bytes() == 0
                                        ? std::string("n/a")
                                        : FormatBytes(status.sample_interval_bytes())});
  table.AddRow({"MALLOC_CONF:", status.malloc_conf().empty() ? "(unset)" : status.malloc_conf()});
  table.AddRow({"dumps served:", std::to_string(status.dumps_served())});
  if (status.has_capture()) {  // unset: an agent from before peak capture
    table.AddRow({"peak capture:", DescribeCaptureState(status.capture())});
    for (const std::string& line : DescribeHeldCaptures(status.capture())) {
      table.AddRow({"", line});
    }
  }
  if (status.has_allocation_window()) {  // unset: an agent from before allocation windows
    table.AddRow({"allocation window:", AllocationWindowText(status.allocation_window(), now)});
  }
  table.AddRow({"RSS:", FormatBytes(status.rss_bytes())});
  table.AddRow({"memory limit:", MemoryLimitText(status)});
  table.AddRow({"agent version:", status.agent_version()});
  if (!status.started_by().empty()) table.AddRow({"agent loaded:", StartedByText(status)});
  table.AddRow({"agent started:", StartedText(status, now)});
  table.AddRow({"socket:", target.socket_path});
  table.Print(out);
  if (auto hint = ProfilingHint(status)) out << "hint: " << *hint << '\n';
}

namespace {

class StatusCommand final : public Command {
 public:
  CLI::App* Register(CLI::App& app) override { return RegisterStatusCommand(app, options_); }
  TargetOptions* target_options() override { return &options_.target; }
  Result<void> Run(const CommandContext& context) override { return RunWith(options_, context); }
  Result<void> RunOnTarget(const Target& target, const CommandContext& context) const override {
    return RunWith(ForTarget(options_, target), context);
  }

 private:
  static Result<void> RunWith(const StatusOptions& options, const CommandContext& context) {
    return RunStatus(options, *context.discovery, *context.client, context.console.out);
  }
  StatusOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeStatusCommand() { return std::make_unique<StatusCommand>(); }

}  // namespace memprof::cli
