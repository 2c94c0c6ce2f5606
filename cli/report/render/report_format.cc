#include "cli/report/render/report_format.h"

#include <algorithm>
#include <cinttypes>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace memprof::report::render {
namespace {

constexpr double kTwoTo63 = 9223372036854775808.0;
constexpr double kTwoTo64 = 18446744073709551616.0;
constexpr double kBytesPerMegabyte = 1048576.0;

// "%.1f" rounded as C's (and so Perl's) printf rounds it. The buffer holds
// any double: DBL_MAX has 309 integer digits.
// std::to_chars with a precision is specified as printf in the C locale, at
// a fraction of its cost (a text report formats tens of thousands of values);
// printf keeps the spelling of NaN and infinity.
std::string OneDecimal(double value, const char* suffix) {
  char buffer[400];
  if (std::isfinite(value)) {
    const std::to_chars_result result =
        std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::fixed, 1);
    return std::string(buffer, result.ptr) + suffix;
  }
  const int length = std::snprintf(buffer, sizeof(buffer), "%.1f%s", value, suffix);
  return std::string(buffer, static_cast<size_t>(std::max(length, 0)));
}

}  // namespace

int64_t PerlInteger(double value) {
  if (std::isnan(value)) return 0;
  if (value < -kTwoTo63) return INT64_MIN;
  if (value < kTwoTo63) return static_cast<int64_t>(value);
  // Perl converts a large positive NV through UV and prints it signed.
  if (value < kTwoTo64) return static_cast<int64_t>(static_cast<uint64_t>(value));
  return -1;
}

std::string FormatValue(double value, Metric metric, bool show_bytes) {
  if (IsObjectMetric(metric) || show_bytes) return std::to_string(PerlInteger(value));
  return OneDecimal(value / kBytesPerMegabyte, "");
}

std::string UnitName(Metric metric, bool show_bytes) {
  if (IsObjectMetric(metric)) return "objects";
  return show_bytes ? "B" : "MiB";  // 2^20 bytes, as jeprof's "MB" is
}

std::string FormatPercent(double value, double total) {
  if (total != 0) return OneDecimal(value * 100.0 / total, "%");
  if (value == 0) return "nan";
  return value > 0 ? "+inf" : "-inf";
}

}  // namespace memprof::report::render
