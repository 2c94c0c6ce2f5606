#include "cli/io/logging.h"

#include <spdlog/sinks/ostream_sink.h>

#include <iostream>
#include <memory>
#include <string>

namespace memprof::cli {
namespace {

std::shared_ptr<spdlog::logger> MakeLogger(std::ostream& err, spdlog::level::level_enum level) {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(err, /*force_flush=*/true);
  auto logger = std::make_shared<spdlog::logger>("memprofctl", std::move(sink));
  logger->set_pattern("%n: %l: %v");
  logger->set_level(level);
  logger->flush_on(spdlog::level::trace);
  return logger;
}

std::shared_ptr<spdlog::logger>& Instance() {
  static std::shared_ptr<spdlog::logger> logger = MakeLogger(std::cerr, spdlog::level::warn);
  return logger;
}

}  // namespace

spdlog::logger& Log() { return *Instance(); }

void ConfigureLogging(std::ostream& err, int verbosity) {
  spdlog::level::level_enum level = verbosity < 0    ? spdlog::level::err
                                    : verbosity == 0 ? spdlog::level::warn
                                    : verbosity == 1 ? spdlog::level::info
                                                     : spdlog::level::debug;
  Instance() = MakeLogger(err, level);
}

void LogError(std::string_view message) {
  std::string line(message);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  Log().error("{}", line);
}

}  // namespace memprof::cli
