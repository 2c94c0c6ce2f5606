#include "cli/commands/exporter_command.h"

#include <memory>
#include <condition_variable>
#include <mutex>

#include "cli/commands/option_validators.h"
#include "cli/exporter/listen_address.h"
#include "cli/exporter/prometheus_renderer.h"
#include "cli/exporter/target_metrics.h"
#include "common/duration.h"

namespace memprof::cli {
namespace {

constexpr char kMetricsPath[] = "/metrics";

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
      "exporter", "Serve the statistics of every local agent to Prometheus (GET /metrics)");
  cmd->add_option("--listen", options.listen,
                  "Address to listen on: IP:PORT, [IPv6]:PORT or localhost:PORT; port 0 picks "
                  "a free one (default 127.0.0.1:9464)")
      ->type_name("HOST:PORT");
  cmd->add_flag("--allow-remote", options.allow_remote,
                "Allow a --listen address other hosts can reach (there is no authentication)");
  cmd->add_option("--target-timeout", options.target_timeout,
                  "Deadline of each call to an agent during a scrape; a target that misses it "
                  "is reported with memprof_up 0 (100ms to 1m, default 2s)")
      ->check(DurationValidator(kMinTargetTimeout, kMaxTargetTimeout))
      ->type_name("DURATION");
  cmd->footer(
      "Targets are found at every scrape, as `memprofctl list` finds them (only those this\n"
      "user may talk to answer). Runs until Ctrl-C or SIGTERM, then exits 0.\n\n"
      "Examples:\n"
      "  memprofctl exporter                          # http://127.0.0.1:9464/metrics\n"
      "  memprofctl exporter --listen 127.0.0.1:0     # any free port, printed on stderr\n"
      "  memprofctl exporter --listen 0.0.0.0:9464 --allow-remote\n");
  return cmd;
}

HttpResponse RouteExporterRequest(const HttpRequest& request,
                                  const std::function<Result<std::string>()>& scrape) {
  if (request.path != kMetricsPath) {
    return HttpResponse{404, "text/plain; charset=utf-8",
                        "not found: the metrics are at /metrics\n", {}};
  }
  if (request.method != "GET" && request.method != "HEAD") {
    return HttpResponse{405, "text/plain; charset=utf-8", "only GET and HEAD are allowed\n",
                        {{"Allow", "GET, HEAD"}}};
  }
  auto body = scrape();
  if (!body) {
    return HttpResponse{500, "text/plain; charset=utf-8", body.error().message + "\n", {}};
  }
  return HttpResponse{200, kPrometheusContentType, std::move(*body), {}};
}

Result<void> RunExporter(const ExporterOptions& options, const TargetDiscovery& discovery,
                         const TimedClientFactory& make_client, const Console& console,
                         const std::stop_token& stop) {
  auto address = CheckedListenAddress(options);
  if (!address) return Fail(address.error());
  auto timeout = ParseDuration(options.target_timeout, kMinTargetTimeout, kMaxTargetTimeout);
  if (!timeout) return Fail(timeout.error());
  if (!stop.stop_possible()) return Fail(ErrorCode::kInternal, "the exporter needs a stop signal");
  const ClientFactory factory = [&make_client, timeout = *timeout] { return make_client(timeout); };
  auto scrape = [&discovery, &factory]() -> Result<std::string> {
    auto metrics = CollectTargetMetrics(discovery, factory, kScrapeParallelism);
    if (!metrics) return Fail(metrics.error());
    return RenderPrometheus(*metrics);
  };
  auto server = HttpServer::Start(
      *address, [&scrape](const HttpRequest& r) { return RouteExporterRequest(r, scrape); });
  if (!server) return Fail(server.error());
  console.notes() << "memprofctl exporter: serving http://" << (*server)->address().ToString()
                  << kMetricsPath << " for the agents in " << discovery.socket_dir()
                  << "; Ctrl-C or SIGTERM stops it" << std::endl;
  WaitForStop(stop);
  server->reset();  // waits for scrapes in progress (their agent calls are cancelled)
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
    return RunExporter(options_, *context.discovery, make_client, context.console,
                       context.cancel);
  }

 private:
  ExporterOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeExporterCommand() { return std::make_unique<ExporterCommand>(); }

}  // namespace memprof::cli
