#include "cli/app/multi_target_dispatch.h"

#include <string>

#include "cli/targets/multi_target_run.h"
#include "common/duration.h"

namespace memprof::cli {
namespace {

// What cannot be done on several targets at once (usage errors, before any
// target is contacted).
Result<void> CheckMultiTarget(const CommandLine& cl) {
  const auto refuse = [](const std::string& why) {
    return Fail(ErrorCode::kInvalidArgument, why);
  };
  if (cl.dump_cmd->parsed() && cl.dump.out_dir.empty()) {
    return refuse("with several targets, dump writes one file per target: use --out-dir DIR");
  }
  if (cl.profile_cmd->parsed() && cl.profile.out_dir.empty()) {
    return refuse("with several targets, profile writes one file per target: use --out-dir DIR");
  }
  const bool periodic = (cl.dump_cmd->parsed() && !cl.dump.every.empty()) ||
                        (cl.stats_cmd->parsed() && !cl.stats.watch.empty());
  if (periodic) {
    return refuse(std::string(cl.dump_cmd->parsed() ? "--every" : "--watch") +
                  " follows one target; for several, repeat the multi-target command from a "
                  "loop or a timer (docs/user-guide.md, \"Collecting from a fleet\")");
  }
  return {};
}

// `options` with the target of one worker of a multi-target run.
template <typename Options>
Options ForTarget(const Options& options, const Target& target) {
  Options copy = options;
  copy.target.resolved = target;
  return copy;
}

TargetTask MultiTargetTask(const CommandLine& cl, const CliEnvironment& env,
                           TargetDiscovery& discovery, const InterruptWatcher* watcher,
                           std::chrono::milliseconds timeout) {
  using Stop = const std::stop_token&;
  if (cl.status_cmd->parsed()) {
    return [&](const Target& t, ProfileClient& c, const Console& con, Stop) {
      return RunStatus(ForTarget(cl.status, t), discovery, c, con.out);
    };
  }
  if (cl.activate_cmd->parsed()) {
    return [&](const Target& t, ProfileClient& c, const Console& con, Stop) {
      return RunActivate(ForTarget(cl.activate, t), discovery, c, con.out);
    };
  }
  if (cl.deactivate_cmd->parsed()) {
    return [&](const Target& t, ProfileClient& c, const Console& con, Stop) {
      return RunDeactivate(ForTarget(cl.deactivate, t), discovery, c, con.out);
    };
  }
  if (cl.dump_cmd->parsed()) {
    return [&](const Target& t, ProfileClient& c, const Console& con, Stop stop) {
      return RunDump(ForTarget(cl.dump, t), discovery, c, con, stop);
    };
  }
  if (cl.stats_cmd->parsed()) {
    return [&](const Target& t, ProfileClient& c, const Console& con, Stop) {
      return RunStats(ForTarget(cl.stats, t), discovery, c, con.out);
    };
  }
  // profile: the first signal ends every window early; the second, or the
  // target's deadline, aborts (stop).
  return [&, watcher, timeout](const Target& t, ProfileClient& c, const Console& con, Stop stop) {
    auto restore_client = env.make_client(timeout, std::stop_token());
    ProfileRuntime runtime;
    if (watcher != nullptr) runtime.end_early = watcher->stop_token();
    runtime.abort = stop;
    runtime.restore_client = restore_client.get();
    return RunProfile(ForTarget(cl.profile, t), discovery, c, con, runtime);
  };
}

}  // namespace

Result<void> RunOnSelectedTargets(const CommandLine& cl, const CliEnvironment& env,
                                  const TargetSelection& selection, const TargetOptions& options,
                                  TargetDiscovery& discovery, const Console& console,
                                  const InterruptWatcher* watcher,
                                  std::chrono::milliseconds timeout) {
  if (auto ok = CheckMultiTarget(cl); !ok) return ok;
  MultiTargetPlan plan;
  plan.parallel = options.parallel;
  plan.rpc_timeout = timeout;
  plan.per_target_timeout = timeout;
  plan.json = options.json;
  std::stop_token stop;
  if (watcher != nullptr) stop = watcher->stop_token();
  if (cl.profile_cmd->parsed()) {
    auto duration = ParseDuration(cl.profile.duration);
    if (!duration) return Fail(ErrorCode::kInvalidArgument, "--duration: " + duration.error().message);
    plan.per_target_timeout += *duration;
    if (watcher != nullptr) stop = watcher->abort_token();
  }
  const StoppableClientFactory make_client = env.make_client;
  if (cl.stats_cmd->parsed() && cl.stats.format == "prometheus") {
    return RunStatsPrometheusOnTargets(selection, plan, discovery, make_client, console, stop);
  }
  const TargetTask task = MultiTargetTask(cl, env, discovery, watcher, timeout);
  return RunOnTargets(selection, plan, discovery, make_client, task, console, stop);
}

}  // namespace memprof::cli
