#ifndef MEMPROF_AGENT_CORE_CORE_LOG_H_
#define MEMPROF_AGENT_CORE_CORE_LOG_H_

#include <string_view>

namespace memprof::agent {

// The core's logging: one line "[memprof <pid>] <level>: <message>" written
// to the host's stderr with a single write(2), and only when
// MEMPROF_LOG_LEVEL asks for that level. By default the agent is silent
// (docs/architecture.md: a guest never writes into its host's output unless
// told to). The core cannot use spdlog: it must stay small and load nothing.
enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// Parses a MEMPROF_LOG_LEVEL value (trace, debug, info, warn/warning, error,
// critical, off); anything else, or empty, means off.
LogLevel ParseLogLevel(std::string_view text);

void SetCoreLogLevel(LogLevel level);
bool CoreLogEnabled(LogLevel level);
void CoreLog(LogLevel level, std::string_view message);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CORE_CORE_LOG_H_
