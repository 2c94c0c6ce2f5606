#include "cli/collect/capture_saver.h"

#include <utility>

#include "cli/collect/interval_ticker.h"

namespace memprof::cli {

CaptureSaver::CaptureSaver(const TargetDiscovery& discovery, ClientFactory make_client,
                           std::string out_dir, const Console& console)
    : discovery_(discovery),
      make_client_(std::move(make_client)),
      out_dir_(std::move(out_dir)),
      console_(console) {}

void CaptureSaver::Run(const std::stop_token& stop) {
  IntervalTicker ticker(kSaverPollInterval, SteadyTickClock());
  const uint64_t scan_every = kSaverScanInterval / kSaverPollInterval;
  for (uint64_t tick = 0; ticker.WaitNext(stop); ++tick) {
    auto client = make_client_();
    if (tick % scan_every == 0) {
      Scan(*client, stop);
    } else {
      Poll(*client, stop);
    }
  }
}

// Every agent there is now: new ones are followed from their first capture
// on, the gone ones forgotten.
void CaptureSaver::Scan(ProfileClient& client, const std::stop_token& stop) {
  auto entries = discovery_.Scan();
  if (!entries) return;
  std::map<std::string, Followed> now;
  for (const SocketEntry& entry : *entries) {
    if (!entry.process_exists || !entry.untrusted.empty()) continue;
    const std::string key = entry.target.socket_path;
    auto known = followed_.find(key);
    Followed f = known != followed_.end() && known->second.target.pid == entry.target.pid
                     ? std::move(known->second)
                     : Followed{entry.target, {}, false};
    if (Look(f, client, stop)) now.emplace(key, std::move(f));
  }
  followed_ = std::move(now);
}

// The agents that were capturing at the last look.
void CaptureSaver::Poll(ProfileClient& client, const std::stop_token& stop) {
  for (auto it = followed_.begin(); it != followed_.end();) {
    if (it->second.capturing && !Look(it->second, client, stop)) {
      it = followed_.erase(it);
    } else {
      ++it;
    }
  }
}

bool CaptureSaver::Look(Followed& f, ProfileClient& client, const std::stop_token& stop) {
  auto status = client.Status(f.target);
  if (!status) return !discovery_.ProcessGone(f.target.pid);
  const auto& capture = status->capture();
  f.capturing = capture.armed() || capture.held_size() > 0;
  if (!f.capturing) return true;
  auto saved = SaveNewCaptures(f.target, *status, out_dir_, /*json=*/false, f.progress, discovery_,
                               client, console_, stop);
  if (!saved) {
    console_.notes() << "pid " << f.target.pid << ": a capture could not be saved ("
                     << saved.error().message << "); trying again\n";
    return true;
  }
  return *saved;
}

}  // namespace memprof::cli
