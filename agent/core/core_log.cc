#include "agent/core/core_log.h"

#include <unistd.h>

#include <atomic>
#include <string>

namespace memprof::agent {
namespace {

std::atomic<LogLevel> g_level{LogLevel::kOff};

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace:
      return "trace";
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warning";
    case LogLevel::kError:
      return "error";
    case LogLevel::kOff:
      break;
  }
  return "off";
}

}  // namespace

LogLevel ParseLogLevel(std::string_view text) {
  if (text == "trace") return LogLevel::kTrace;
  if (text == "debug") return LogLevel::kDebug;
  if (text == "info") return LogLevel::kInfo;
  if (text == "warn" || text == "warning") return LogLevel::kWarn;
  if (text == "error" || text == "err" || text == "critical") return LogLevel::kError;
  return LogLevel::kOff;
}

void SetCoreLogLevel(LogLevel level) { g_level.store(level); }

bool CoreLogEnabled(LogLevel level) {
  const LogLevel threshold = g_level.load();
  return threshold != LogLevel::kOff && level >= threshold;
}

void CoreLog(LogLevel level, std::string_view message) {
  if (!CoreLogEnabled(level)) return;
  std::string line = "[memprof " + std::to_string(::getpid()) + "] " + LevelName(level) + ": ";
  line.append(message);
  line.push_back('\n');
  // One write: lines from several threads or processes never interleave.
  // Nothing to do if it fails; the host's stderr is not ours to repair.
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace memprof::agent
