#ifndef MEMPROF_AGENT_LOGGING_AGENT_LOGGER_H_
#define MEMPROF_AGENT_LOGGING_AGENT_LOGGER_H_

#include <spdlog/logger.h>

#include <string_view>

namespace memprof::agent {

// The agent's own logger, named "memprof", writing to stderr. It is never
// registered in spdlog's global registry and never becomes the default
// logger, so a host that uses spdlog keeps its logging exactly as it was.
spdlog::logger& Logger();

// Sets the level from a MEMPROF_LOG_LEVEL value ("trace" … "critical", "off").
// Unknown or empty values leave the default: off, since a guest writes
// nothing into its host's stderr unless asked to.
void SetLogLevel(std::string_view level);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_LOGGING_AGENT_LOGGER_H_
