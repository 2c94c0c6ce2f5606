#ifndef MEMPROF_CLI_COMMANDS_REPORT_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_REPORT_COMMAND_H_

#include <memory>
#include <sys/types.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/commands/command.h"
#include "cli/io/console.h"
#include "cli/report/report_pipeline.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl report DUMP [--format F] [-o FILE] ...`: analyse a heap
// profile natively (jeprof's answers, in text, collapsed, pprof, svg, json).
struct ReportOptions {
  std::vector<std::string> dumps;  // several: merged (summed)
  std::string out = "-";
  std::string format;              // --format; "" is text (or json with --json)
  std::vector<std::string> bases;  // several: summed, then subtracted
  bool trend = false;              // rank call sites by steady growth over the dumps
  bool lifetimes = false;          // allocation profiles: per site, lifetimes and survival
  std::string focus;
  std::string ignore;
  size_t top = 0;  // 0: every row
  bool inuse_space = false;  // the default for heap dumps; allocation profiles: survivors
  bool inuse_objects = false;
  bool alloc_space = false;
  bool alloc_objects = false;
  bool show_bytes = false;
  bool cum = false;
  bool lines = false;
  bool nearest_symbol = false;
  pid_t pid = 0;  // the live process the dump came from (binaries via /proc)
  std::string sysroot;
  bool no_cache = false;  // --no-cache: no plain copies of compressed debug files
  bool json = false;   // --json: --format json
  bool force = false;  // --force: replace an existing --out FILE
};

CLI::App* RegisterReportCommand(CLI::App& app, ReportOptions& options);

// Builds the pipeline request; kInvalidArgument for an unknown format.
[[nodiscard]] Result<report::ReportRequest> MakeReportRequest(const ReportOptions& options);

// `stdout_is_terminal`: binary output (pprof) is refused on a terminal.
// `stderr_redraws`: a progress line shows while debuginfod downloads.
[[nodiscard]] Result<void> RunReport(const ReportOptions& options, const Console& console,
                                     bool stdout_is_terminal, bool stderr_redraws = false);

// The `report` command for the registry (command_registry.cc).
std::unique_ptr<Command> MakeReportCommand();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_REPORT_COMMAND_H_
