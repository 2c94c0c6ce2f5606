#include "cli/collect/debuginfod_progress.h"

#include <algorithm>
#include <cstdio>
#include <mutex>

#include "common/path.h"

namespace memprof::cli {
namespace {

constexpr std::chrono::milliseconds kRedraw{100};
constexpr char kEraseLine[] = "\r\033[K";

}  // namespace

std::unique_ptr<DebuginfodProgress> DebuginfodProgress::StartIfUseful(std::ostream& err,
                                                                      bool stderr_redraws) {
  if (!stderr_redraws || !report::symbolize::DebuginfodConfigured()) return nullptr;
  return std::make_unique<DebuginfodProgress>(err, /*ticking=*/true);
}

DebuginfodProgress::DebuginfodProgress(std::ostream& err, bool ticking) : err_(err) {
  report::symbolize::SetDebuginfoLookupObserver(this);
  if (ticking) drawer_ = std::jthread([this](const std::stop_token& stop) { Draw(stop); });
}

DebuginfodProgress::~DebuginfodProgress() {
  report::symbolize::SetDebuginfoLookupObserver(nullptr);
  if (drawer_.joinable()) {
    drawer_.request_stop();
    drawer_.join();
  }
  std::lock_guard lock(mutex_);
  EraseLocked();
}

void DebuginfodProgress::LookupStarted(std::string_view file) {
  std::lock_guard lock(mutex_);
  running_.emplace_back(std::string(file), Clock::now());
}

void DebuginfodProgress::LookupFinished(std::string_view file) {
  std::lock_guard lock(mutex_);
  auto it = std::find_if(running_.begin(), running_.end(),
                         [&](const auto& lookup) { return lookup.first == file; });
  if (it != running_.end()) running_.erase(it);
  // Erased at once, not at the next redraw: the report may print next.
  if (running_.empty()) EraseLocked();
}

std::string DebuginfodProgress::LineAt(Clock::time_point now) const {
  std::lock_guard lock(mutex_);
  return LineLocked(now);
}

std::string DebuginfodProgress::LineLocked(Clock::time_point now) const {
  if (running_.empty() || now - running_.front().second < kQuiet) return "";
  const double seconds = std::chrono::duration<double>(now - running_.front().second).count();
  char elapsed[32];
  std::snprintf(elapsed, sizeof(elapsed), "%.1f s", seconds);
  std::string line = "memprofctl: fetching debug info for " +
                     std::string(PathBasename(running_.front().first)) + " from debuginfod (" +
                     elapsed;
  if (running_.size() > 1) line += ", " + std::to_string(running_.size() - 1) + " more waiting";
  return line + ")";
}

void DebuginfodProgress::EraseLocked() {
  if (!drawn_) return;
  err_ << kEraseLine << std::flush;
  drawn_ = false;
}

void DebuginfodProgress::Draw(const std::stop_token& stop) {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait_for(lock, stop, kRedraw, [] { return false; });
    if (stop.stop_requested()) return;
    const std::string line = LineLocked(Clock::now());
    if (line.empty()) {
      EraseLocked();
      continue;
    }
    err_ << '\r' << line << "\033[K" << std::flush;
    drawn_ = true;
  }
}

}  // namespace memprof::cli
