#ifndef MEMPROF_CLI_COLLECT_CAPTURE_SAVER_H_
#define MEMPROF_CLI_COLLECT_CAPTURE_SAVER_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <stop_token>
#include <string>

#include "cli/client/profile_client.h"
#include "cli/collect/captured_dump.h"
#include "cli/io/console.h"
#include "cli/targets/target_discovery.h"

namespace memprof::cli {

// How often the saver looks for agents (discovery, and one Status each), and
// how often it asks those whose capturing is armed for new captures.
inline constexpr std::chrono::milliseconds kSaverScanInterval(1000);
inline constexpr std::chrono::milliseconds kSaverPollInterval(100);

// `exporter --captures-dir DIR`: keeps every peak capture of every agent it
// can reach on disk, as `dump --captured --follow` does for one, so that the
// captures outlive the processes (an OOM kill ends them with their
// captures). Each second it finds the agents and asks each for its status;
// those that are armed or hold captures it asks again every 100 ms and
// writes each new capture into DIR (CaptureFileName; existing files never
// replaced), a line on stderr each. Captures held when it first sees a
// process are written too. Failures are noted on stderr and tried again on
// the next look; they never end the exporter.
class CaptureSaver {
 public:
  using ClientFactory = std::function<std::unique_ptr<ProfileClient>()>;

  CaptureSaver(const TargetDiscovery& discovery, ClientFactory make_client, std::string out_dir,
               const Console& console);

  // Runs until `stop`.
  void Run(const std::stop_token& stop);

 private:
  struct Followed {
    Target target;
    CaptureProgress progress;
    bool capturing = false;  // armed or holding captures at the last look
  };
  void Scan(ProfileClient& client, const std::stop_token& stop);
  void Poll(ProfileClient& client, const std::stop_token& stop);
  // Asks `f`'s agent and saves what is new; false once the process is gone.
  bool Look(Followed& f, ProfileClient& client, const std::stop_token& stop);

  const TargetDiscovery& discovery_;
  ClientFactory make_client_;
  std::string out_dir_;
  const Console& console_;
  std::map<std::string, Followed> followed_;  // by socket path
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_CAPTURE_SAVER_H_
