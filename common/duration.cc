#include "common/duration.h"

#include <charconv>
#include <cstdint>
#include <optional>

namespace memprof {
namespace {

constexpr char kExamples[] = "use a number with a unit, e.g. 30s, 5m, 1h or 1h30m";

std::optional<int64_t> UnitMillis(std::string_view unit) {
  if (unit == "ms") return 1;
  if (unit == "s") return 1000;
  if (unit == "m") return 60 * 1000;
  if (unit == "h") return 60 * 60 * 1000;
  return std::nullopt;
}

Error Invalid(std::string_view text, std::string_view why) {
  return Error(ErrorCode::kInvalidArgument,
               "invalid duration '" + std::string(text) + "': " + std::string(why));
}

// Reads one "<digits><unit>" term from the front of `rest`, advancing it.
Result<int64_t> ParseTerm(std::string_view text, std::string_view& rest) {
  // from_chars would accept a sign; a duration never has one.
  if (rest.front() == '-' || rest.front() == '+') {
    return Fail(Invalid(text, "a duration cannot be negative or signed; " + std::string(kExamples)));
  }
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (ec == std::errc::result_out_of_range) return Fail(Invalid(text, "number too large"));
  if (ec != std::errc() || ptr == rest.data()) {
    return Fail(Invalid(text, std::string("expected a number; ") + kExamples));
  }
  rest.remove_prefix(static_cast<size_t>(ptr - rest.data()));
  size_t unit_len = 0;
  while (unit_len < rest.size() && rest[unit_len] >= 'a' && rest[unit_len] <= 'z') ++unit_len;
  if (unit_len == 0) return Fail(Invalid(text, std::string("missing unit; ") + kExamples));
  auto millis = UnitMillis(rest.substr(0, unit_len));
  if (!millis) {
    return Fail(Invalid(text, "unknown unit '" + std::string(rest.substr(0, unit_len)) +
                                  "' (valid units: ms, s, m, h)"));
  }
  rest.remove_prefix(unit_len);
  if (value > INT64_MAX / *millis) return Fail(Invalid(text, "number too large"));
  return value * *millis;
}

}  // namespace

Result<std::chrono::milliseconds> ParseDuration(std::string_view text,
                                                std::chrono::milliseconds min,
                                                std::chrono::milliseconds max) {
  if (text.empty()) return Fail(Invalid(text, std::string("empty; ") + kExamples));
  std::string_view rest = text;
  int64_t total = 0;
  while (!rest.empty()) {
    auto term = ParseTerm(text, rest);
    if (!term) return Fail(term.error());
    if (total > INT64_MAX - *term) return Fail(Invalid(text, "number too large"));
    total += *term;
  }
  std::chrono::milliseconds d(total);
  if (d < min || d > max) {
    return Fail(Invalid(text, "must be between " + FormatDuration(min) + " and " +
                                  FormatDuration(max)));
  }
  return d;
}

std::string FormatDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms == 0) return "0s";
  std::string out;
  if (ms < 0) {
    out = "-";
    ms = -ms;
  }
  constexpr struct { int64_t millis; const char* unit; } kUnits[] = {
      {3600000, "h"}, {60000, "m"}, {1000, "s"}, {1, "ms"}};
  for (const auto& u : kUnits) {
    if (ms >= u.millis) {
      out += std::to_string(ms / u.millis) + u.unit;
      ms %= u.millis;
    }
  }
  return out;
}

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace memprof
