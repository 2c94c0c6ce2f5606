#ifndef MEMPROF_CLI_COMMANDS_ACTIVATE_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_ACTIVATE_COMMAND_H_

#include <memory>
#include <CLI/CLI.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/client/profile_client.h"
#include "cli/commands/command.h"
#include "cli/targets/target_discovery.h"
#include "cli/targets/target_options.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl activate [--pid N] [--for DURATION] [--sample-interval SIZE]
// [--reset] [--capture-growth SIZE] [--capture-near-limit PERCENT] [--keep N] [--json]`: start sampling
// allocations, optionally for a window the agent closes by itself, optionally
// after discarding the samples so far, optionally arming peak capture.
struct ActivateOptions {
  TargetOptions target;
  std::string duration;         // --for; empty: until deactivated
  std::string sample_interval;  // --sample-interval SIZE; empty: keep the current one
  bool reset = false;           // --reset: discard the samples collected so far
  std::string capture_growth;   // --capture-growth SIZE; empty: peak capture as it is
  std::string capture_near_limit;  // --capture-near-limit PERCENT; empty: none
  uint32_t keep = 0;            // --keep N (needs --capture-growth); 0: the default
};

// Captures kept by `activate --capture-growth` (--keep).
inline constexpr uint32_t kMinCaptureKeep = 1;
inline constexpr uint32_t kMaxCaptureKeep = 16;
inline constexpr uint32_t kDefaultCaptureKeep = 4;

// "pid 42: peak capture armed: a heap profile each time ..." after an
// activation that armed it, or "" when it did not ask to.
std::string DescribeCaptureArming(const memprof::v1::ActivateResponse& response, pid_t pid,
                                  bool requested);

CLI::App* RegisterActivateCommand(CLI::App& app, ActivateOptions& options);

// A bad --for or --sample-interval fails with kInvalidArgument before
// anything is contacted. An agent too old for --sample-interval/--reset
// (it answers no sample interval) is kFailedPrecondition.
[[nodiscard]] Result<void> RunActivate(const ActivateOptions& options, TargetDiscovery& discovery,
                                       ProfileClient& client, std::ostream& out);

// "pid 1234: profiling activated (was inactive), until ... (in 5m)" and variants.
std::string DescribeActivation(const memprof::v1::ActivateResponse& response, pid_t pid,
                               std::chrono::system_clock::time_point now);

// What happened to the samples and the sample interval, or "" when the
// activation did not touch them ("pid 42: sample interval now 1.0 MiB (was
// 512.0 KiB); the samples collected so far were discarded (prof.reset)").
// `requested_bytes` is what --sample-interval said before rounding (0: not given).
std::string DescribeSampling(const memprof::v1::ActivateResponse& response, pid_t pid,
                             uint64_t requested_bytes, bool reset_requested);

// `requested_sample_interval_bytes`: what --sample-interval said, 0 if not given.
nlohmann::json ActivationToJson(const memprof::v1::ActivateResponse& response, pid_t pid,
                                uint64_t requested_sample_interval_bytes = 0);

// The `activate` command for the registry (command_registry.cc).
std::unique_ptr<Command> MakeActivateCommand();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_ACTIVATE_COMMAND_H_
