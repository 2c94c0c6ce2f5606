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
  followed_.clear();  // each watch sees the stop and its thread is joined
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
    Followed f;
    if (known != followed_.end() && known->second.target.pid == entry.target.pid) {
      f = std::move(known->second);
    } else {
      f.target = entry.target;
    }
    if (!WatchEnded(f) || Look(f, client, stop)) now.emplace(key, std::move(f));
  }
  followed_ = std::move(now);
}

// The agents that cannot push and were capturing at the last look.
void CaptureSaver::Poll(ProfileClient& client, const std::stop_token& stop) {
  for (auto it = followed_.begin(); it != followed_.end();) {
    Followed& f = it->second;
    if (!f.pushes && f.capturing && !Look(f, client, stop)) {
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
  auto saved = Save(f.target, capture, f.progress, client, stop);
  if (!saved) return true;
  if (*saved && f.pushes && capture.armed()) StartWatch(f);
  return *saved;
}

bool CaptureSaver::WatchEnded(Followed& f) {
  if (!f.watcher) return true;
  if (!f.watcher->done.load()) return false;
  f.watcher->thread.join();
  f.progress = f.watcher->progress;
  if (f.watcher->unsupported.load()) f.pushes = false;  // asked every kSaverPollInterval
  f.watcher.reset();
  return true;
}

void CaptureSaver::StartWatch(Followed& f) {
  f.watcher = std::make_unique<Watcher>();
  f.watcher->progress = f.progress;
  Watcher& watcher = *f.watcher;
  watcher.thread = std::jthread([this, target = f.target, &watcher](std::stop_token stop) {
    RunWatch(target, watcher, stop);
    watcher.done.store(true);
  });
}

// Until the agent's capturing is disarmed, the stream breaks (the next scan
// looks again) or the exporter stops. An agent older than Watch answers at
// once, and is polled from then on.
void CaptureSaver::RunWatch(const Target& target, Watcher& watcher, const std::stop_token& stop) {
  auto client = make_client_();
  auto watched = client->Watch(
      target,
      [&](const memprof::v1::WatchEvent& event) -> Result<bool> {
        const auto& capture = event.capture();
        auto saved = Save(target, capture, watcher.progress, *client, stop);
        if (!saved) return Fail(saved.error());
        return *saved && capture.armed();
      },
      stop);
  if (watched && !*watched) watcher.unsupported.store(true);
}

Result<bool> CaptureSaver::Save(const Target& target, const memprof::v1::CaptureState& capture,
                                CaptureProgress& progress, ProfileClient& client,
                                const std::stop_token& stop) {
  std::lock_guard lock(save_mu_);
  auto saved = SaveNewCaptures(target, capture, out_dir_, /*json=*/false, progress, discovery_,
                               client, console_, stop);
  if (!saved) {
    console_.notes() << "pid " << target.pid << ": a capture could not be saved ("
                     << saved.error().message << "); trying again\n";
  }
  return saved;
}

}  // namespace memprof::cli
