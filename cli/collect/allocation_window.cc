#include "cli/collect/allocation_window.h"

#include <atomic>
#include <fstream>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>

#include "cli/client/dump_transfer.h"
#include "cli/client/target.h"
#include "cli/collect/periodic_dump.h"
#include "cli/io/human_format.h"
#include "cli/io/logging.h"
#include "cli/report/parse/gzip_input.h"
#include "cli/targets/target_selection.h"
#include "common/duration.h"
#include "common/json_schema_versions.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;

constexpr int kStatusEvery = 4;  // ticks of 250 ms: a Status a second
constexpr char kAllocationsExtension[] = "allocs";
constexpr size_t kHeaderBytes = 4096;  // more than a profile's header

double Seconds(milliseconds d) { return static_cast<double>(d.count()) / 1000.0; }

// One allocation window, step by step.
class AllocationRun {
 public:
  AllocationRun(const AllocationWindowRequest& request, const TargetDiscovery& discovery,
                ProfileClient& client, const Console& console, const ProfileRuntime& runtime)
      : request_(request),
        discovery_(discovery),
        client_(client),
        console_(console),
        runtime_(runtime) {
    outcome_.path = request.out;
    outcome_.requested = request.duration;
  }

  Result<AllocationOutcome> Run();

 private:
  Result<void> Open();
  WindowWaitResult Wait();
  bool WindowEndedByAgent();
  Result<DeliveredDump> Fetch();
  void Discard();
  void ReadHeader();

  const AllocationWindowRequest& request_;
  const TargetDiscovery& discovery_;
  ProfileClient& client_;
  const Console& console_;
  const ProfileRuntime& runtime_;
  Target target_;
  AllocationOutcome outcome_;
};

Result<AllocationOutcome> AllocationRun::Run() {
  if (auto opened = Open(); !opened) return Fail(opened.error());
  const WindowWaitResult waited = Wait();
  outcome_.waited = waited.waited;
  outcome_.interrupted = waited.end == WindowEnd::kEndedEarly;
  if (waited.end == WindowEnd::kTargetExited) {
    return Fail(ErrorCode::kNotFound,
                DescribeTarget(target_) + " exited during the allocation window, after " +
                    FormatElapsed(waited.waited) + " of " + FormatDuration(outcome_.requested) +
                    "; no profile was written");
  }
  if (runtime_.abort.stop_requested()) {
    Discard();
    return Fail(ErrorCode::kCancelled,
                "profile aborted by a second interrupt; the allocation window was ended and "
                "nothing was written");
  }
  auto fetched = Fetch();
  if (!fetched) {
    if (runtime_.abort.stop_requested()) Discard();
    return Fail(fetched.error());
  }
  outcome_.dump = fetched->summary;
  ReadHeader();
  return outcome_;
}

Result<void> AllocationRun::Open() {
  auto target = discovery_.Resolve(request_.target);
  if (!target) return Fail(target.error());
  target_ = *target;
  outcome_.pid = target_.pid;
  if (!request_.out_dir.empty()) {
    const std::string extension =
        request_.format == kRawDumpFormat ? kAllocationsExtension : request_.format;
    outcome_.path = UnusedDumpPath(request_.out_dir, HostForFileNames(target_), target_.pid,
                                   std::chrono::system_clock::now(), extension);
  }
  memprof::v1::AllocationWindowRequest open;
  open.set_duration_ms(static_cast<uint64_t>(request_.duration.count()));
  open.set_record_bound(request_.record_bound);
  auto opened = client_.OpenAllocationWindow(target_, open);
  if (!opened) return Fail(opened.error());
  outcome_.window = opened->window();
  outcome_.record_bound = opened->record_bound();
  outcome_.profiling_activated = opened->profiling_activated();
  Log().info("pid {}: allocation window #{} opened for {}", target_.pid, outcome_.window,
             FormatDuration(request_.duration));
  return {};
}

WindowWaitResult AllocationRun::Wait() {
  // The wait also ends when the agent has ended the window by itself (near
  // its record bound): the agent pushes the change (Watch, on a thread of
  // its own here); an agent older than Watch is asked (Status) every
  // kStatusEvery ticks.
  std::stop_source ended;
  std::stop_callback interrupt(runtime_.end_early, [&ended] { ended.request_stop(); });
  std::atomic<bool> pushes{true};
  std::jthread watch([&](const std::stop_token& stop) {
    auto watched = client_.Watch(
        target_,
        [&](const memprof::v1::WatchEvent& event) -> Result<bool> {
          if (event.allocation_window().open_window() == outcome_.window) return true;
          ended.request_stop();
          return false;
        },
        stop);
    if (!watched || !*watched) pushes.store(false);
  });
  int ticks = 0;
  const WindowTick ask_agent = [&](milliseconds) {
    if (pushes.load() || ++ticks % kStatusEvery != 0) return;
    if (WindowEndedByAgent()) ended.request_stop();
  };
  WindowWaitResult waited = WaitShowingProgress(runtime_, console_, target_.local_pid(),
                                                outcome_.requested, ended.get_token(), ask_agent);
  if (waited.end == WindowEnd::kEndedEarly && !runtime_.end_early.stop_requested()) {
    waited.end = WindowEnd::kElapsed;  // the agent's end: no interrupt to report
  } else if (waited.end == WindowEnd::kEndedEarly) {
    console_.notes() << "pid " << target_.pid << ": interrupted: allocation window ended after "
                     << FormatElapsed(waited.waited) << " of " << FormatDuration(outcome_.requested)
                     << "; fetching its profile now (interrupt again to abort)\n"
                     << std::flush;
  }
  return waited;
}

// Whether the agent no longer has this window open (it ended near its bound).
bool AllocationRun::WindowEndedByAgent() {
  auto status = client_.Status(target_);
  return status && status->has_allocation_window() &&
         status->allocation_window().open_window() != outcome_.window;
}

Result<DeliveredDump> AllocationRun::Fetch() {
  DumpDestination dump;
  dump.target.resolved = target_;
  dump.out = outcome_.path;
  dump.format = request_.format;
  dump.existing = request_.existing;
  dump.allocation_window = outcome_.window;
  return DeliverDump(dump, discovery_, client_, console_, runtime_.abort);
}

// Ends the window now and drops its profile: the agent hands it over once,
// so a fetch that is given up at once leaves nothing recording or held.
void AllocationRun::Discard() {
  ProfileClient& client = runtime_.restore_client != nullptr ? *runtime_.restore_client : client_;
  memprof::v1::DumpRequest request;
  request.set_allocation_window(outcome_.window);
  (void)client.Dump(target_, request, [](const memprof::v1::DumpChunk&) -> Result<void> {
    return Fail(ErrorCode::kCancelled, "discarded");
  });
}

// How the window ended, from the profile's own header (a file only; the
// agent writes it gzip'd).
void AllocationRun::ReadHeader() {
  if (request_.format != kRawDumpFormat || outcome_.path == kStdoutPath) return;
  std::ifstream in(outcome_.path, std::ios::binary);
  std::string head(kHeaderBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (report::parse::IsGzip(head)) head = report::parse::GunzipPrefix(head, kHeaderBytes);
  std::istringstream lines(head);
  std::string line;
  while (std::getline(lines, line) && !line.starts_with("---")) {
    if (line.starts_with("ended_by: ")) outcome_.ended_by = line.substr(10);
    if (line == "records_lost: 1") outcome_.records_lost = true;
  }
}

}  // namespace

Result<AllocationOutcome> RunAllocationWindow(const AllocationWindowRequest& request,
                                              const TargetDiscovery& discovery,
                                              ProfileClient& client, const Console& console,
                                              const ProfileRuntime& runtime) {
  return AllocationRun(request, discovery, client, console, runtime).Run();
}

std::string DescribeAllocationOutcome(const AllocationOutcome& o) {
  std::string s = "pid " + std::to_string(o.pid) + ": allocation profile of " +
                  FormatElapsed(o.waited) + " written to " +
                  (o.path == kStdoutPath ? std::string("stdout") : o.path) + " (" +
                  FormatBytes(o.dump.size_bytes) + ")";
  if (o.ended_by == "bound") {
    s += "\n  the window ended early: its records neared the bound of " +
         std::to_string(o.record_bound) +
         " sampled allocations (a larger --record-bound, or a larger sample interval, records "
         "longer)";
  }
  if (o.records_lost) {
    s += "\n  warning: the record bound was reached before the agent could end the window; the "
         "profile covers only its last part (`memprofctl report` says from when)";
  }
  return s;
}

nlohmann::json AllocationOutcomeToJson(const AllocationOutcome& o) {
  return {{"schema_version", kAllocationProfileJsonVersion},
          {"pid", o.pid},
          {"path", o.path},
          {"size_bytes", o.dump.size_bytes},
          {"sha256", o.dump.sha256_hex},
          {"sample_interval_bytes", o.dump.sample_interval_bytes},
          {"created_unix_ms", o.dump.created_unix_ms},
          {"requested_seconds", Seconds(o.requested)},
          {"profiled_seconds", Seconds(o.waited)},
          {"interrupted", o.interrupted},
          {"window", o.window},
          {"record_bound", o.record_bound},
          {"profiling_activated", o.profiling_activated},
          {"ended_by", o.ended_by},
          {"records_lost", o.records_lost}};
}

}  // namespace memprof::cli
