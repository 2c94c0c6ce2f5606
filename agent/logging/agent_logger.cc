#include "agent/logging/agent_logger.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <memory>
#include <string>

namespace memprof::agent {

spdlog::logger& Logger() {
  // Leaked on purpose: it must outlive every thread that may still log while
  // the process exits, and static destruction order is not ours to choose.
  static spdlog::logger* logger = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto* l = new spdlog::logger("memprof", std::move(sink));
    l->set_pattern("[memprof %P] %l: %v");
    l->set_level(spdlog::level::off);  // silent unless MEMPROF_LOG_LEVEL asks
    return l;
  }();
  return *logger;
}

void SetLogLevel(std::string_view level) {
  if (level.empty()) return;
  auto parsed = spdlog::level::from_str(std::string(level));
  // from_str answers "off" for names it does not know; honour only a real "off".
  if (parsed == spdlog::level::off && level != "off") return;
  Logger().set_level(parsed);
}

}  // namespace memprof::agent
