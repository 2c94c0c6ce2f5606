#include "cli/targets/multi_target_run.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <sstream>
#include <thread>

#include "cli/io/exit_codes.h"
#include "cli/io/human_format.h"
#include "cli/io/logging.h"
#include "cli/io/parallel_for.h"
#include "common/duration.h"
#include "common/json_schema_versions.h"

namespace memprof::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxNamedFailures = 10;

// Requests `source` to stop once `after` has passed, unless destroyed first.
class Deadline {
 public:
  Deadline(std::stop_source source, std::chrono::milliseconds after)
      : thread_([this, source, after](std::stop_token done) mutable {
          std::mutex mutex;
          std::unique_lock lock(mutex);
          std::condition_variable_any cv;
          cv.wait_for(lock, done, after, [] { return false; });
          if (done.stop_requested()) return;
          expired_ = true;
          source.request_stop();
        }) {}

  bool expired() const { return expired_; }

 private:
  std::atomic<bool> expired_{false};
  std::jthread thread_;  // last: started once expired_ exists; joined first
};

// What the outcome's target is called in messages: its description once it
// was looked up, else what the user wrote.
std::string NameOf(const TargetOutcome& outcome) {
  if (outcome.target.pid != 0 || outcome.target.remote()) return DescribeTarget(outcome.target);
  return outcome.spec.ToString();
}

struct RunContext {
  const TargetSelection& selection;
  const MultiTargetPlan& plan;
  const TargetDiscovery& discovery;
  const StoppableClientFactory& make_client;
  const TargetTask& task;
  const std::stop_token& stop;
  bool quiet;  // -q: each target's console drops its notes too
};

Result<void> LookUpAndRun(const RunContext& run, const TargetSpec& spec, ProfileClient& client,
                          TargetOutcome& outcome, const Console& console,
                          const std::stop_token& stop) {
  auto target = ResolveSpec(spec, run.selection, run.discovery, client);
  if (!target) return Fail(target.error());
  outcome.target = *target;
  return run.task(*target, client, console, stop);
}

TargetOutcome RunOne(const RunContext& run, const TargetSpec& spec) {
  TargetOutcome outcome;
  outcome.spec = spec;
  const auto start = Clock::now();
  std::stop_source source;
  std::stop_callback link(run.stop, [&source] { source.request_stop(); });
  std::ostringstream out;
  std::ostringstream err;
  {
    Deadline deadline(source, run.plan.per_target_timeout);
    auto client = run.make_client(run.plan.rpc_timeout, source.get_token());
    outcome.result =
        LookUpAndRun(run, spec, *client, outcome, Console{out, err, run.quiet},
                     source.get_token());
    if (!outcome.result && deadline.expired() && !run.stop.stop_requested()) {
      outcome.result = Fail(ErrorCode::kUnavailable,
                            "timed out after " + FormatDuration(run.plan.per_target_timeout) +
                                " (--timeout bounds the work for each target)");
    }
  }
  outcome.out = std::move(out).str();
  outcome.err = std::move(err).str();
  outcome.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return outcome;
}

void Print(const TargetOutcome& outcome, bool json, const Console& console) {
  if (json) {
    console.out << TargetOutcomeJson(outcome).dump() << '\n';
  } else {
    // A block of several lines (a status, a stats table) gets a heading;
    // one-line answers already name their pid.
    if (std::count(outcome.out.begin(), outcome.out.end(), '\n') > 1) {
      console.out << "== " << NameOf(outcome) << " ==\n";
    }
    console.out << outcome.out;
  }
  console.out.flush();
  console.err << outcome.err;
  if (!outcome.result) LogError(NameOf(outcome) + ": " + outcome.result.error().message);
}

Error Summary(const std::vector<TargetOutcome>& outcomes) {
  size_t failed = 0;
  std::string names;
  for (const TargetOutcome& o : outcomes) {
    if (o.result) continue;
    if (++failed <= kMaxNamedFailures) {
      names += (names.empty() ? "" : ", ") + o.spec.ToString() + " (" +
               ErrorCodeName(o.result.error().code) + ")";
    }
  }
  if (failed > kMaxNamedFailures) names += ", ...";
  return Error(ErrorCode::kPartialFailure, std::to_string(failed) + " of " +
                                               std::to_string(outcomes.size()) +
                                               " targets failed: " + names);
}

}  // namespace

Result<void> RunOnTargets(const TargetSelection& selection, const MultiTargetPlan& plan,
                          const TargetDiscovery& discovery,
                          const StoppableClientFactory& make_client, const TargetTask& task,
                          const Console& console, const std::stop_token& stop) {
  const RunContext run{selection, plan, discovery, make_client, task, stop, console.quiet};
  std::vector<TargetOutcome> outcomes(selection.specs.size());
  std::mutex print;
  ForEachInParallel(selection.specs.size(), plan.parallel, [&](size_t i) {
    if (stop.stop_requested()) {
      outcomes[i].spec = selection.specs[i];
      outcomes[i].result = Fail(ErrorCode::kCancelled, "interrupted");
      return;
    }
    outcomes[i] = RunOne(run, selection.specs[i]);
    std::lock_guard lock(print);
    Print(outcomes[i], plan.json, console);
  });
  if (stop.stop_requested()) return Fail(ErrorCode::kCancelled, "interrupted");
  const bool all_ok = std::all_of(outcomes.begin(), outcomes.end(),
                                  [](const TargetOutcome& o) { return o.result.has_value(); });
  if (all_ok) return {};
  return Fail(Summary(outcomes));
}

nlohmann::json TargetOutcomeJson(const TargetOutcome& outcome) {
  const bool ok = outcome.result.has_value();
  nlohmann::json result = nlohmann::json::object();
  if (ok && !outcome.out.empty()) {
    result = nlohmann::json::parse(outcome.out, nullptr, /*allow_exceptions=*/false);
    if (result.is_discarded() || !result.is_object()) result = {{"output", outcome.out}};
  }
  return {
      {"schema_version", kMultiTargetJsonVersion},
      {"target", outcome.spec.ToString()},
      {"pid", outcome.target.pid},
      {"command", outcome.target.command},
      {"address", outcome.target.address},
      {"ok", ok},
      {"exit_code", ok ? kExitOk : ExitCodeFor(outcome.result.error().code)},
      {"error_code", ok ? "" : ErrorCodeName(outcome.result.error().code)},
      {"error", ok ? std::string() : outcome.result.error().message},
      {"elapsed_ms", outcome.elapsed.count()},
      {"result", std::move(result)},
  };
}

}  // namespace memprof::cli
