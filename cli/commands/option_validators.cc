#include "cli/commands/option_validators.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <string>

#include "cli/io/byte_size.h"
#include "common/duration.h"

namespace memprof::cli {

CLI::Validator DurationValidator(std::chrono::milliseconds min, std::chrono::milliseconds max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        auto parsed = ParseDuration(text, min, max);
        return parsed ? std::string() : parsed.error().message;
      },
      "");
}

CLI::Validator SampleIntervalValidator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto parsed = ParseSampleInterval(text);
        return parsed ? std::string() : parsed.error().message;
      },
      "");
}

CLI::Validator CaptureGrowthValidator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto parsed = ParseCaptureGrowth(text);
        return parsed ? std::string() : parsed.error().message;
      },
      "");
}

CLI::Validator NearLimitShareValidator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto parsed = ParseNearLimitShare(text);
        return parsed ? std::string() : parsed.error().message;
      },
      "");
}

CLI::Validator PidValidator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        long value = 0;
        auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || ptr != text.data() + text.size() || value <= 0 ||
            value > INT_MAX) {
          return "invalid pid '" + text + "': expected a positive process id";
        }
        return std::string();
      },
      "");
}

CLI::Validator CountValidator(uint64_t min, uint64_t max, const std::string& what) {
  return CLI::Validator(
      [min, max, what](std::string& text) -> std::string {
        uint64_t value = 0;
        auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() ||
            value < min || value > max) {
          return "invalid " + what + " '" + text + "': expected a whole number from " +
                 std::to_string(min) + " to " + std::to_string(max);
        }
        return std::string();
      },
      "");
}

CLI::Validator ChoiceValidator(std::vector<std::string> valid, const std::string& what) {
  return CLI::Validator(
      [valid = std::move(valid), what](std::string& text) -> std::string {
        if (std::find(valid.begin(), valid.end(), text) != valid.end()) return std::string();
        std::string list;
        for (const std::string& name : valid) list += (list.empty() ? "" : ", ") + name;
        return "unknown " + what + " '" + text + "' (valid: " + list + ")";
      },
      "");
}

namespace {

// "" when `path` exists and is (or is not) a directory, else why not.
std::string CheckPath(const std::string& path, bool directory) {
  const char* kind = directory ? "directory" : "file";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::string("no such ") + kind + " '" + path + "'";
    return "cannot use '" + path + "': " + std::strerror(errno);
  }
  if (directory && !S_ISDIR(st.st_mode)) return "'" + path + "' is not a directory";
  if (!directory && S_ISDIR(st.st_mode)) return "'" + path + "' is a directory, not a file";
  return std::string();
}

}  // namespace

CLI::Validator ExistingFileValidator() {
  return CLI::Validator([](std::string& path) { return CheckPath(path, false); }, "");
}

CLI::Validator ExistingDirectoryValidator() {
  return CLI::Validator([](std::string& path) { return CheckPath(path, true); }, "");
}

}  // namespace memprof::cli
