#ifndef MEMPROF_CLI_IO_LOGGING_H_
#define MEMPROF_CLI_IO_LOGGING_H_

#include <spdlog/logger.h>

#include <ostream>
#include <string_view>

namespace memprof::cli {

// memprofctl's own named spdlog logger ("memprofctl"), writing lines such as
// "memprofctl: warning: ..." to stderr. It is never registered as spdlog's
// default logger. Before ConfigureLogging it writes to std::cerr at level warn.
spdlog::logger& Log();

// Points the logger at `err` (stderr in production, a string stream in tests).
// verbosity -1 (-q) = errors only, 0 = warnings and errors, 1 (-v) adds
// info, 2+ (-vv) adds debug.
void ConfigureLogging(std::ostream& err, int verbosity);

// Prints the one-line error of a failed command: "memprofctl: error: <message>".
// Newlines inside the message are folded so it stays one line.
void LogError(std::string_view message);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_LOGGING_H_
