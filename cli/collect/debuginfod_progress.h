#ifndef MEMPROF_CLI_COLLECT_DEBUGINFOD_PROGRESS_H_
#define MEMPROF_CLI_COLLECT_DEBUGINFOD_PROGRESS_H_

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "cli/report/symbolize/debuginfo_lookup.h"

namespace memprof::cli {

// A progress line on a terminal while a report waits for debug info from a
// debuginfod server: which file, for how long. A lookup in local files ends
// long before kQuiet, so only downloads show. The line is redrawn in place
// and erased when the lookups end, before the report's own output.
class DebuginfodProgress final : public report::symbolize::DebuginfoLookupObserver {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kQuiet{300};

  // A running progress line on `err`, registered as the lookup observer;
  // null where it would show nothing: stderr is not a terminal that can
  // redraw a line (CanRedraw: not TERM=dumb), or DEBUGINFOD_URLS is unset
  // or empty (libdwfl then asks no server).
  static std::unique_ptr<DebuginfodProgress> StartIfUseful(std::ostream& err,
                                                           bool stderr_redraws);

  // Without `ticking`, nothing is drawn (tests call LineAt).
  DebuginfodProgress(std::ostream& err, bool ticking);
  // Unregisters, stops drawing and erases the line.
  ~DebuginfodProgress() override;
  DebuginfodProgress(const DebuginfodProgress&) = delete;
  DebuginfodProgress& operator=(const DebuginfodProgress&) = delete;

  void LookupStarted(std::string_view file) override;
  void LookupFinished(std::string_view file) override;

  // The line to show at `now`: the oldest lookup running for kQuiet or
  // more, and how many others run beside it; "" when there is none.
  std::string LineAt(Clock::time_point now) const;

 private:
  std::string LineLocked(Clock::time_point now) const;
  void EraseLocked();
  void Draw(const std::stop_token& stop);

  // Guards everything below, the drawing too, so lines never interleave.
  mutable std::mutex mutex_;
  std::condition_variable_any wake_;
  std::vector<std::pair<std::string, Clock::time_point>> running_;  // oldest first
  std::ostream& err_;
  bool drawn_ = false;  // a line is on the screen
  std::jthread drawer_;  // last member: stopped and joined first
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_DEBUGINFOD_PROGRESS_H_
