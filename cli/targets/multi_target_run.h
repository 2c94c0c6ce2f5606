#ifndef MEMPROF_CLI_TARGETS_MULTI_TARGET_RUN_H_
#define MEMPROF_CLI_TARGETS_MULTI_TARGET_RUN_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stop_token>

#include "cli/client/profile_client.h"
#include "cli/client/target.h"
#include "cli/io/console.h"
#include "cli/targets/target_discovery.h"
#include "cli/targets/target_selection.h"
#include "common/result.h"

namespace memprof::cli {

// A fresh client whose calls have `rpc_timeout` and are cancelled by `stop`.
using StoppableClientFactory = std::function<std::unique_ptr<ProfileClient>(
    std::chrono::milliseconds rpc_timeout, std::stop_token stop)>;

// What a command does to one target of a multi-target run. It prints to
// `console` as it would in a single-target run (data on out, notes on err);
// the run captures both. `stop` is requested on SIGINT/SIGTERM and when the
// target's time is up.
using TargetTask = std::function<Result<void>(const Target& target, ProfileClient& client,
                                              const Console& console, const std::stop_token& stop)>;

struct MultiTargetPlan {
  size_t parallel = 8;
  // Bounds all the work for one target (looking it up included); past it,
  // the target's calls are cancelled and it counts as failed.
  std::chrono::milliseconds per_target_timeout{10000};
  // Deadline of each single request (the --timeout of a single-target run).
  std::chrono::milliseconds rpc_timeout{10000};
  // One JSON object per line per target (see TargetOutcomeJson) instead of
  // each target's own output.
  bool json = false;
};

// How one target of a run ended.
struct TargetOutcome {
  TargetSpec spec;
  Target target;  // as far as it was looked up (pid 0 if not at all)
  Result<void> result;
  std::string out;  // what the task printed on stdout
  std::string err;  // and on stderr
  std::chrono::milliseconds elapsed{0};
};

// Runs `task` on every target of `selection`, at most plan.parallel at once.
// Each target is looked up (ResolveSpec) and worked on by its own worker
// with its own client, so a failing, hanging or vanished target never stops
// the others. As each finishes, its output is printed whole (never
// interleaved with another's): with plan.json one line, else its captured
// stdout and stderr, and on failure one error line naming the target.
// Returns success when every target succeeded, kCancelled when `stop` was
// requested, else kPartialFailure ("2 of 64 targets failed: ...", exit 6).
[[nodiscard]] Result<void> RunOnTargets(const TargetSelection& selection,
                                        const MultiTargetPlan& plan,
                                        const TargetDiscovery& discovery,
                                        const StoppableClientFactory& make_client,
                                        const TargetTask& task, const Console& console,
                                        const std::stop_token& stop);

// The JSON line of an outcome: target (as named), pid, command, address,
// ok, exit_code, error_code, error, elapsed_ms and result (the command's own
// --json output for this target; {} when it failed). Every key is always
// present with the same type.
nlohmann::json TargetOutcomeJson(const TargetOutcome& outcome);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_TARGETS_MULTI_TARGET_RUN_H_
