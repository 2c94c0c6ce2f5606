#include "cli/io/human_format.h"

#include <cstdio>
#include <ctime>

#include "common/duration.h"

namespace memprof::cli {

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  // Switch units before rounding would print "1024.0".
  while (value >= 1023.95 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", value, kUnits[unit]);
  return buf;
}

std::string FormatLocalTime(int64_t unix_ms) {
  std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm local{};
  if (localtime_r(&seconds, &local) == nullptr) return std::to_string(unix_ms) + " ms";
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &local);
  return buf;
}

std::string FormatRelative(int64_t unix_ms, std::chrono::system_clock::time_point now) {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  const milliseconds delta(unix_ms - ToUnixMillis(now));
  const seconds rounded = std::chrono::round<seconds>(delta);
  if (rounded == seconds(0)) return "now";
  if (rounded > seconds(0)) return "in " + FormatDuration(rounded);
  return FormatDuration(-rounded) + " ago";
}

std::string FormatPercent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", ratio * 100.0);
  return buf;
}

int64_t ToUnixMillis(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace memprof::cli
