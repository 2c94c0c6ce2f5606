#ifndef MEMPROF_CLI_COLLECT_CAPTURE_SAVER_H_
#define MEMPROF_CLI_COLLECT_CAPTURE_SAVER_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "cli/client/profile_client.h"
#include "cli/collect/captured_dump.h"
#include "cli/io/console.h"
#include "cli/targets/target_discovery.h"

namespace memprof::cli {

// How often the saver looks for agents (discovery, and one Status each), and
// how often it asks those that cannot push (older than Watch) and are armed
// for new captures.
inline constexpr std::chrono::milliseconds kSaverScanInterval(1000);
inline constexpr std::chrono::milliseconds kSaverPollInterval(100);

// `exporter --captures-dir DIR`: keeps every peak capture of every agent it
// can reach on disk, as `dump --captured --follow` does for one, so that the
// captures outlive the processes (an OOM kill ends them with their
// captures). Each second it finds the agents and asks each for its status;
// for each that is armed or holds captures it follows the agent's pushed
// changes (Watch) on a thread of its own, and writes each new capture into
// DIR as the agent takes it (CaptureFileName; existing files never
// replaced), a line on stderr each. An agent older than Watch is asked
// again every 100 ms instead. Captures held when it first sees a process
// are written too. Failures are noted on stderr and tried again on the next
// look; they never end the exporter.
class CaptureSaver {
 public:
  using ClientFactory = std::function<std::unique_ptr<ProfileClient>()>;

  CaptureSaver(const TargetDiscovery& discovery, ClientFactory make_client, std::string out_dir,
               const Console& console);

  // Runs until `stop`; the watches end with it.
  void Run(const std::stop_token& stop);

 private:
  // One agent's watch, on its own thread, owning the agent's progress
  // while it runs.
  struct Watcher {
    std::atomic<bool> done{false};
    std::atomic<bool> unsupported{false};  // the agent is older than Watch
    CaptureProgress progress;
    std::jthread thread;
  };
  struct Followed {
    Target target;
    CaptureProgress progress;
    bool capturing = false;  // armed or holding captures at the last look
    bool pushes = true;      // false: the agent is older than Watch
    std::unique_ptr<Watcher> watcher;
  };
  void Scan(ProfileClient& client, const std::stop_token& stop);
  void Poll(ProfileClient& client, const std::stop_token& stop);
  // Asks `f`'s agent and saves what is new, then watches it if it is
  // capturing and can push; false once the process is gone.
  bool Look(Followed& f, ProfileClient& client, const std::stop_token& stop);
  // Takes the progress back from a watch that ended; false while it runs.
  static bool WatchEnded(Followed& f);
  void StartWatch(Followed& f);
  void RunWatch(const Target& target, Watcher& watcher, const std::stop_token& stop);
  Result<bool> Save(const Target& target, const memprof::v1::CaptureState& capture,
                    CaptureProgress& progress, ProfileClient& client, const std::stop_token& stop);

  const TargetDiscovery& discovery_;
  ClientFactory make_client_;
  std::string out_dir_;
  const Console& console_;
  std::mutex save_mu_;  // one capture written (and its line printed) at a time
  std::map<std::string, Followed> followed_;  // by socket path; the Run thread's
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_CAPTURE_SAVER_H_
