#include "cli/commands/attach_command.h"

#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli/attach/agent_injector.h"
#include "cli/attach/attach_check.h"
#include "cli/commands/target_flags.h"
#include "cli/launch/run_planner.h"
#include "common/json_schema_versions.h"

namespace memprof::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kDefaultTimeout = std::chrono::seconds(10);
constexpr auto kSocketPoll = std::chrono::milliseconds(5);

const char* AllocatorLabel(AttachCheck::Allocator allocator) {
  switch (allocator) {
    case AttachCheck::Allocator::kJemalloc: return "jemalloc";
    case AttachCheck::Allocator::kTcmalloc: return "tcmalloc";
    case AttachCheck::Allocator::kGlibc: return "glibc";
  }
  return "glibc";
}

std::string Joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

double Milliseconds(std::chrono::microseconds us) { return static_cast<double>(us.count()) / 1000.0; }

nlohmann::json CheckJson(const AttachCheck& check, const AttachCapabilities& caps) {
  nlohmann::json j = {{"schema_version", kAttachJsonVersion},
                      {"pid", check.pid},
                      {"command", check.command},
                      {"allocator", AllocatorLabel(check.allocator)},
                      {"already_attached", check.agent_loaded},
                      {"sampler", caps.sampler},
                      {"works", caps.works},
                      {"refused", caps.refused},
                      {"refusal_reason", caps.refusal_reason},
                      {"ptrace_refusal", check.refusal.value_or("")},
                      {"attached", false},
                      {"pause_ms", nlohmann::json::array()},
                      {"through_memfd", !check.agent_visible},
                      {"memfd_pause_ms", 0.0},
                      {"socket", ""}};
  j["profiling_at_start"] = !check.profiling_at_start ? "unknown"
                            : *check.profiling_at_start ? "enabled"
                                                        : "disabled";
  return j;
}

void PrintCapabilities(const AttachCheck& check, const AttachCapabilities& caps, std::ostream& out) {
  out << "allocator:  " << AllocatorLabel(check.allocator);
  if (!check.allocator_file.empty()) out << " (" << check.allocator_file << ")";
  out << '\n';
  if (check.allocator == AttachCheck::Allocator::kJemalloc) {
    out << "profiling:  "
        << (check.profiling_at_start ? (*check.profiling_at_start ? "enabled at start" : "not enabled at start")
                                     : "unknown until attached")
        << (check.profiling_source.empty() ? "" : " (" + check.profiling_source + ")") << '\n';
  }
  out << "sampler:    "
      << (caps.sampler == "memprof"
              ? std::string("memprof's own: heap profiles of what is allocated from activation on")
              : caps.sampler + "'s own")
      << '\n';
  out << "works:      " << Joined(caps.works) << '\n';
  if (!caps.refused.empty()) {
    out << "refused:    " << Joined(caps.refused) << ": " << caps.refusal_reason << '\n';
  }
}

// Why attach must stop before it touches the process, or nothing.
Result<void> Preconditions(const AttachCheck& check, const std::string& agent) {
  const std::string who = "process " + std::to_string(check.pid) + " (" + check.command + ")";
  if (check.agent_switched_off) {
    return Fail(ErrorCode::kFailedPrecondition,
                who + " has MEMPROF_AGENT=off in its environment, which attach respects");
  }
  if (check.refusal) {
    return Fail(ErrorCode::kPermissionDenied, "cannot attach to " + who + ": " + *check.refusal);
  }
  (void)agent;
  return {};
}

// Where the agent's server part is: beside the agent, as installed and in
// the build tree. kFailedPrecondition when it is missing.
Result<std::string> ServerBeside(const std::string& agent) {
  const std::string server =
      agent.substr(0, agent.rfind('/') + 1) + "libmemprof_agent_server.so";
  if (::access(server.c_str(), R_OK) != 0) {
    return Fail(ErrorCode::kFailedPrecondition,
                "the agent's server part " + server + " is missing (reinstall memprof)");
  }
  return server;
}

Result<Target> AwaitSocket(TargetDiscovery& discovery, pid_t pid, Clock::time_point deadline) {
  for (;;) {
    auto target = discovery.Resolve(pid);
    if (target || Clock::now() >= deadline) return target;
    std::this_thread::sleep_for(kSocketPoll);
  }
}

Result<void> RunAttach(const AttachOptions& options, const CommandContext& context) {
  std::ostream& out = context.console.out;
  const std::string& proc_root = context.env.proc_root;
  auto agent = LocateAgent(context.env.run_environment());
  auto check = CheckForAttach(proc_root, options.pid, agent ? *agent : std::string(),
                              CurrentTracer(proc_root));
  if (!check) return Fail(check.error());
  // What stops the user first: a process they may not attach to at all is
  // said before a library they could not use on it anyway.
  if (!agent && !check->agent_loaded) {
    if (auto ok = Preconditions(*check, std::string()); !ok) return ok;
    return Fail(agent.error());
  }
  const AttachCapabilities caps = CapabilitiesOf(*check);
  if (check->agent_loaded) {
    auto target = context.discovery->Resolve(options.pid);
    if (!target) {
      return Fail(ErrorCode::kFailedPrecondition,
                  "the agent is loaded in process " + std::to_string(options.pid) +
                      " but does not answer: " + target.error().message);
    }
    if (options.json) {
      nlohmann::json j = CheckJson(*check, caps);
      j["socket"] = target->socket_path;
      out << j.dump(2) << '\n';
    } else {
      out << "process " << options.pid << " (" << check->command << ") is already attached\n";
    }
    return {};
  }
  if (options.dry_run) {
    if (options.json) {
      out << CheckJson(*check, caps).dump(2) << '\n';
    } else {
      out << "process " << options.pid << " (" << check->command << "): "
          << (check->refusal ? "cannot be attached: " + *check->refusal : "can be attached")
          << "\n";
      PrintCapabilities(*check, caps, out);
    }
    return Preconditions(*check, *agent);
  }
  if (auto ok = Preconditions(*check, *agent); !ok) return ok;
  const auto deadline =
      Clock::now() + (context.timeout.count() > 0 ? context.timeout
                                                   : std::chrono::milliseconds(kDefaultTimeout));
  InjectRequest request;
  request.pid = options.pid;
  request.agent_path = *agent;
  request.proc_root = proc_root;
  request.deadline = deadline;
  if (!check->agent_visible) {  // another mount namespace: bring the files along
    auto server = ServerBeside(*agent);
    if (!server) return Fail(server.error());
    request.server_path = *server;
  }
  auto injected = InjectAgent(request);
  if (!injected) return Fail(injected.error());
  if (injected->start_result != 0) {
    return Fail(ErrorCode::kInternal,
                "the agent was loaded into process " + std::to_string(options.pid) +
                    " but did not start: " +
                    (injected->start_error.empty() ? std::string("no reason given")
                                                   : injected->start_error));
  }
  auto target = AwaitSocket(*context.discovery, options.pid, deadline);
  if (!target) return Fail(target.error());
  if (options.json) {
    nlohmann::json j = CheckJson(*check, caps);
    j["attached"] = true;
    j["pause_ms"] = nlohmann::json::array(
        {Milliseconds(injected->first_pause), Milliseconds(injected->second_pause)});
    j["memfd_pause_ms"] = Milliseconds(injected->files_pause);
    j["socket"] = target->socket_path;
    out << j.dump(2) << '\n';
    return {};
  }
  out << "attached to process " << options.pid << " (" << check->command << "): thread "
      << injected->borrowed_tid << " paused " << Milliseconds(injected->first_pause) << " ms, then "
      << Milliseconds(injected->second_pause) << " ms\n";
  if (!request.server_path.empty()) {
    out << "through memfds: the process does not see " << *agent
        << " (another mount namespace); a stop of " << Milliseconds(injected->files_pause)
        << " ms created them\n";
  }
  out << "socket:     " << target->socket_path << '\n';
  PrintCapabilities(*check, caps, out);
  return {};
}

class AttachCommand final : public Command {
 public:
  CLI::App* Register(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand(
        "attach", "Load the agent into a running process that was started without it");
    cmd->add_option("-p,--pid", options_.pid, "The process to attach")
        ->required()
        ->check(CLI::PositiveNumber)
        ->type_name("PID");
    cmd->add_flag("--dry-run", options_.dry_run,
                  "Say what would work once attached; touch nothing");
    AddJsonFlag(*cmd, options_.json);
    cmd->footer(
        "Stops one thread of the process for a moment (ptrace) to start a thread that loads\n"
        "the agent, as root or as the process's user where the kernel allows ptrace.\n"
        "What works then depends on how its allocator was started: jemalloc with\n"
        "MALLOC_CONF=prof:true everything; jemalloc without it, glibc malloc: status,\n"
        "stats, doctor, purge.\n"
        "Examples:\n"
        "  memprofctl attach --pid 1234 --dry-run\n"
        "  memprofctl attach --pid 1234 && memprofctl stats --pid 1234\n");
    return cmd;
  }
  Result<void> Run(const CommandContext& context) override { return RunAttach(options_, context); }

 private:
  AttachOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeAttachCommand() { return std::make_unique<AttachCommand>(); }

}  // namespace memprof::cli
