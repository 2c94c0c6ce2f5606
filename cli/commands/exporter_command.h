#ifndef MEMPROF_CLI_COMMANDS_EXPORTER_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_EXPORTER_COMMAND_H_

#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>

#include "cli/client/profile_client.h"
#include "cli/commands/command.h"
#include "cli/exporter/http_server.h"
#include "cli/io/console.h"
#include "cli/targets/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl exporter [--listen ADDR] [--allow-remote] [--target-timeout D]`:
// a Prometheus exporter. GET /metrics asks every local target (as `list`
// finds them) for its statistics, at scrape time, and answers in the text
// exposition format (see prometheus_renderer.h); /debug/pprof/ serves their
// heap profiles in Go's net/http/pprof layout (heap_profile_endpoint.h).
// Runs until SIGINT/SIGTERM.
struct ExporterOptions {
  std::string listen = "127.0.0.1:9464";
  bool allow_remote = false;          // required for a non-loopback --listen
  std::string target_timeout = "2s";  // deadline of each call to an agent
  std::string captures_dir;           // --captures-dir: keep every agent's captures there
};

// Bounds of --target-timeout, and how many agents one scrape asks at once.
inline constexpr std::chrono::milliseconds kMinTargetTimeout(100);
inline constexpr std::chrono::milliseconds kMaxTargetTimeout = std::chrono::minutes(1);
inline constexpr size_t kScrapeParallelism = 8;

CLI::App* RegisterExporterCommand(CLI::App& app, ExporterOptions& options);

// A client whose calls have the given deadline.
using TimedClientFactory =
    std::function<std::unique_ptr<ProfileClient>(std::chrono::milliseconds rpc_timeout)>;

// Checks --listen (kInvalidArgument for a non-loopback address without
// --allow-remote), binds, prints "serving http://ADDR/metrics and
// http://ADDR/debug/pprof/" on console.err (the bound port when 0 was asked
// for), then serves (exporter_routes.h) until `stop` is requested and
// returns success. `make_client` should be cancelled by `stop`;
// `make_restore_client` (nullptr: make_client) puts the profiling state back
// after a heap?seconds= window and should not be.
[[nodiscard]] Result<void> RunExporter(const ExporterOptions& options,
                                       const TargetDiscovery& discovery,
                                       const TimedClientFactory& make_client,
                                       const Console& console, const std::stop_token& stop,
                                       const TimedClientFactory* make_restore_client = nullptr);

// The `exporter` command for the registry (command_registry.cc).
std::unique_ptr<Command> MakeExporterCommand();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_EXPORTER_COMMAND_H_
