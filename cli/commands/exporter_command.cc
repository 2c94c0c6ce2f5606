#include "cli/commands/exporter_command.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "cli/collect/capture_saver.h"
#include "cli/collect/heap_capture.h"
#include "cli/collect/periodic_dump.h"
#include "cli/commands/option_validators.h"
#include "cli/exporter/exporter_routes.h"
#include "cli/exporter/heap_profile_endpoint.h"
#include "cli/exporter/html_pages.h"
#include "cli/exporter/listen_address.h"
#include "cli/exporter/pprof_targets.h"
#include "cli/exporter/process_symbols.h"
#include "cli/exporter/prometheus_renderer.h"
#include "cli/exporter/symbol_endpoint.h"
#include "cli/exporter/target_metrics.h"
#include "common/duration.h"
#include "common/version.h"

namespace memprof::cli {
namespace {

Result<ListenAddress> CheckedListenAddress(const ExporterOptions& options) {
  auto address = ParseListenAddress(options.listen);
  if (!address) return Fail(address.error());
  if (!address->IsLoopback() && !options.allow_remote) {
    return Fail(ErrorCode::kInvalidArgument,
                "--listen " + options.listen +
                    " is reachable from other hosts, and the exporter has no authentication "
                    "(it shows the pids, names and memory of this user's processes): listen on "
                    "127.0.0.1 or [::1], or pass --allow-remote to mean it");
  }
  return address;
}

// Blocks until `stop` is requested.
void WaitForStop(const std::stop_token& stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  cv.wait(lock, stop, [] { return false; });
}

}  // namespace

CLI::App* RegisterExporterCommand(CLI::App& app, ExporterOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "exporter",
      "Serve the statistics of every local agent to Prometheus (GET /metrics) and their heap "
      "and allocation profiles to pprof and continuous profilers (GET /debug/pprof/pid/N/heap, "
      "/debug/pprof/pid/N/allocs)");
  cmd->add_option("--listen", options.listen,
                  "Address to listen on: IP:PORT, [IPv6]:PORT or localhost:PORT; port 0 picks "
                  "a free one (default 127.0.0.1:9464)")
      ->type_name("HOST:PORT");
  cmd->add_flag("--allow-remote", options.allow_remote,
                "Allow a --listen address other hosts can reach (there is no authentication)");
  cmd->add_option("--target-timeout", options.target_timeout,
                  "Deadline of each call to an agent: during a scrape (a target that misses it "
                  "is reported with memprof_up 0) and for a heap profile (until the dump "
                  "starts) (100ms to 1m, default 2s)")
      ->check(DurationValidator(kMinTargetTimeout, kMaxTargetTimeout))
      ->type_name("DURATION");
  cmd->add_option("--captures-dir", options.captures_dir,
                  "Keep every peak and near-limit capture of every agent on disk in DIR as it is "
                  "taken (as `dump --captured --follow` does for one), so that captures outlive "
                  "their process, an OOM kill too")
      ->type_name("DIR");
  cmd->footer(
      "Targets are found at every scrape, as `memprofctl list` finds them (only those this\n"
      "user may talk to answer). Runs until Ctrl-C or SIGTERM, then exits 0.\n"
      "Endpoints (http://ADDR/ lists them): /metrics; /debug/pprof/ (the targets);\n"
      "/debug/pprof/pid/N/heap (a symbolized pprof of what has been sampled so far; profiling\n"
      "must be active, but for tcmalloc, whose live heap a 1s window shows);\n"
      "/debug/pprof/pid/N/heap?seconds=S (profile S seconds, 1 to 300, first, then leave\n"
      "profiling as it was); /debug/pprof/pid/N/symbol (what pprof asks for the names a\n"
      "profile lacks); /debug/pprof/pid/N/allocs[?seconds=S] (what pid N allocates in the\n"
      "next S seconds, default 30, as pprof's alloc_space and inuse_space; jemalloc only).\n"
      "/debug/pprof/heap?pid=N[&seconds=S] and /debug/pprof/allocs?pid=N[&seconds=S] serve\n"
      "the same profiles. One heap and one allocs request per process at a time (else 429).\n\n"
      "Examples:\n"
      "  memprofctl exporter                          # http://127.0.0.1:9464/metrics\n"
      "  memprofctl exporter --listen 127.0.0.1:0     # any free port, printed on stderr\n"
      "  memprofctl exporter --listen 0.0.0.0:9464 --allow-remote\n"
      "  memprofctl exporter --captures-dir /var/lib/memprof/captures\n"
      "  pprof -top http://127.0.0.1:9464/debug/pprof/pid/1234/heap\n"
      "  pprof -top -sample_index=alloc_space \\\n"
      "      'http://127.0.0.1:9464/debug/pprof/pid/1234/allocs?seconds=10'\n");
  return cmd;
}

namespace {

// /metrics: every target's figures, then the exporter's own.
Result<std::string> Scrape(const TargetDiscovery& discovery, const ClientFactory& factory) {
  const auto started = std::chrono::steady_clock::now();
  auto metrics = CollectTargetMetrics(discovery, factory, kScrapeParallelism);
  if (!metrics) return Fail(metrics.error());
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
  return RenderPrometheus(*metrics) + RenderExporterMetrics(kVersion, took.count());
}

// /debug/pprof/heap takes its profiles as `dump` and `profile` do
// (collect/heap_capture.h), through clients whose calls have the deadline
// of --target-timeout (for the dump: until the agent starts sending); the
// state is put back through one that the exporter's stop does not cancel.
// /debug/pprof/allocs records allocation windows (`allocations`) the same way.
HeapCapture MakeHeapCapture(const TargetDiscovery& discovery, const TimedClientFactory& client,
                            const TimedClientFactory& restore_client,
                            std::chrono::milliseconds timeout, const std::stop_token& stop,
                            bool allocations) {
  return [&discovery, &client, &restore_client, timeout, stop, allocations](
             const Target& target, std::optional<std::chrono::milliseconds> window) {
    const auto c = client(timeout);
    const auto r = restore_client(timeout);
    return CaptureHeapReport(HeapCaptureRequest{target, "pprof", window, allocations}, discovery,
                             *c, *r, stop);
  };
}

}  // namespace

Result<void> RunExporter(const ExporterOptions& options, const TargetDiscovery& discovery,
                         const TimedClientFactory& make_client, const Console& console,
                         const std::stop_token& stop,
                         const TimedClientFactory* make_restore_client) {
  auto address = CheckedListenAddress(options);
  if (!address) return Fail(address.error());
  auto timeout = ParseDuration(options.target_timeout, kMinTargetTimeout, kMaxTargetTimeout);
  if (!timeout) return Fail(timeout.error());
  if (!stop.stop_possible()) return Fail(ErrorCode::kInternal, "the exporter needs a stop signal");
  if (!options.captures_dir.empty()) {
    if (auto ok = CheckOutputDirectory(options.captures_dir, "--captures-dir"); !ok) return ok;
  }
  const ClientFactory factory = [&make_client, timeout = *timeout] { return make_client(timeout); };
  const TimedClientFactory& restore =
      make_restore_client != nullptr ? *make_restore_client : make_client;
  HeapProfileEndpoint heap(discovery, factory,
                           MakeHeapCapture(discovery, make_client, restore, *timeout, stop, false));
  HeapProfileEndpoint allocs(discovery, factory,
                             MakeHeapCapture(discovery, make_client, restore, *timeout, stop, true),
                             PprofProfile::kAllocs);
  SymbolEndpoint symbol(discovery, [](const Target& target, std::span<const uint64_t> addresses) {
    return NameProcessAddresses(target.local_pid(), addresses);
  });
  ExporterPages pages;
  pages.metrics = [&discovery, &factory] { return Scrape(discovery, factory); };
  pages.pprof_index = [&discovery, &factory]() -> Result<std::string> {
    auto targets = CollectPprofTargets(discovery, factory, kScrapeParallelism);
    if (!targets) return Fail(targets.error());
    return RenderPprofIndex(*targets);
  };
  pages.heap = [&heap](const HttpRequest& r) { return heap.Handle(r); };
  pages.allocs = [&allocs](const HttpRequest& r) { return allocs.Handle(r); };
  pages.symbol = [&symbol](const HttpRequest& r) { return symbol.Handle(r); };
  auto server = HttpServer::Start(
      *address, [&pages](const HttpRequest& r) { return RouteExporterRequest(r, pages); });
  if (!server) return Fail(server.error());
  const std::string base = "http://" + (*server)->address().ToString();
  console.notes() << "memprofctl exporter: serving " << base << kMetricsPath << " and " << base
                  << kPprofIndexPath << " for the agents in " << discovery.socket_dir()
                  << "; Ctrl-C or SIGTERM stops it" << std::endl;
  std::jthread saver;
  if (!options.captures_dir.empty()) {
    console.notes() << "memprofctl exporter: keeping every capture in " << options.captures_dir
                    << std::endl;
    saver = std::jthread([&discovery, &make_client, timeout = *timeout, &options, &console,
                          stop](const std::stop_token&) {
      CaptureSaver(
          discovery, [&make_client, timeout] { return make_client(timeout); }, options.captures_dir,
          console)
          .Run(stop);
    });
  }
  WaitForStop(stop);
  if (saver.joinable()) saver.join();
  server->reset();  // waits for requests in progress (their agent calls are cancelled)
  console.notes() << "memprofctl exporter: stopped" << std::endl;
  return {};
}

namespace {

class ExporterCommand final : public Command {
 public:
  CLI::App* Register(CLI::App& app) override { return RegisterExporterCommand(app, options_); }
  SignalEnd signal_end() const override { return SignalEnd::kEndsNormally; }
  Result<void> Run(const CommandContext& context) override {
    const TimedClientFactory make_client = [&context](std::chrono::milliseconds timeout) {
      return context.env.make_client(timeout, context.cancel);
    };
    const TimedClientFactory make_restore_client = [&context](std::chrono::milliseconds t) {
      return context.env.make_client(t, std::stop_token());
    };
    return RunExporter(options_, *context.discovery, make_client, context.console, context.cancel,
                       &make_restore_client);
  }

 private:
  ExporterOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeExporterCommand() { return std::make_unique<ExporterCommand>(); }

}  // namespace memprof::cli
