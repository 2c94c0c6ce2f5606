#include "cli/commands/option_validators.h"

#include <charconv>
#include <climits>
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

CLI::Validator CountValidator(uint64_t min, uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        uint64_t value = 0;
        auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() ||
            value < min || value > max) {
          return "invalid count '" + text + "': expected a whole number from " +
                 std::to_string(min) + " to " + std::to_string(max);
        }
        return std::string();
      },
      "");
}

}  // namespace memprof::cli
