#ifndef MEMPROF_CLI_COLLECT_PROFILE_WINDOW_H_
#define MEMPROF_CLI_COLLECT_PROFILE_WINDOW_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <stop_token>
#include <string>

#include "cli/client/profile_client.h"
#include "cli/collect/dump_delivery.h"
#include "cli/collect/profile_outcome.h"
#include "cli/collect/window_wait.h"
#include "cli/io/console.h"
#include "cli/targets/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// One profiling window of one target: what `memprofctl profile` does, and
// what the exporter's /debug/pprof/heap?seconds=S does.
struct ProfileWindowRequest {
  TargetSelector target;
  std::chrono::milliseconds duration{0};
  std::string out;                      // FILE, or "-" for console.out
  std::string out_dir;                  // or DIR: {host}-{pid}-{UTC time}.{extension} in it
  std::string format = kRawDumpFormat;  // as `dump --format`
  ExistingFile existing = ExistingFile::kRefuse;  // kReplace: --force
};

// What RunProfileWindow needs besides the target and its agent.
struct ProfileRuntime {
  // First SIGINT/SIGTERM: end the window now, and still dump.
  std::stop_token end_early;
  // Second signal: give up. The dump is cancelled (no file, no temp file);
  // `client` should be cancelled by this token too.
  std::stop_token abort;
  // Puts the activation state back; never cancelled (bounded by its RPC
  // deadline), so that an aborted profile still leaves the process as it
  // found it. nullptr: use `client`.
  ProfileClient* restore_client = nullptr;
  // Draw a progress bar on console.err (it is a terminal).
  bool progress = false;
  // How the window is waited for (tests replace it).
  std::function<WindowWaitResult(pid_t, std::chrono::milliseconds, const std::stop_token&,
                                 std::chrono::milliseconds, const WindowTick&)>
      wait = WaitForWindow;
};

// Resolves the target; Status; Activate with a window of duration +
// kProfileWindowMargin unless profiling is already active for long enough;
// waits; dumps as `dump` does (DeliverDump: temp file, size and SHA-256
// check, rename; a report format is analysed here); puts the state back
// (conditionally on the activation generation, see profile_outcome.h).
// The request is not validated here (the caller has). Errors: the agent's
// and the dump's; the target exiting during the window is kNotFound and
// writes nothing; an abort is kCancelled and writes nothing. A failure to
// restore is no error: it is in the outcome (restore_error). Only the
// progress bar and the "interrupted" note are printed.
[[nodiscard]] Result<ProfileOutcome> RunProfileWindow(const ProfileWindowRequest& request,
                                                      const TargetDiscovery& discovery,
                                                      ProfileClient& client, const Console& console,
                                                      const ProfileRuntime& runtime);

// Waits out a window of `duration` in `pid` with `runtime.wait`, ending
// early when `end_early` is requested: the progress bar on console.err while
// `runtime.progress` (cleared at the end), and `also` on every tick (250 ms).
// Without either, the wait is one sleep.
WindowWaitResult WaitShowingProgress(const ProfileRuntime& runtime, const Console& console,
                                     pid_t pid, std::chrono::milliseconds duration,
                                     const std::stop_token& end_early,
                                     const WindowTick& also = {});

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_PROFILE_WINDOW_H_
