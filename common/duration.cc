#include "common/duration.h"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>

namespace memprof {
namespace {

constexpr char kExamples[] = "use a number with a unit, e.g. 30s, 5m, 1h or 1h30m";

// Units in any letter case: "1H", "10M", "500MS". A duration has no months,
// so "M" is minutes, as "m" is.
std::optional<int64_t> UnitMillis(std::string_view unit) {
  std::string lower(unit);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "ms") return 1;
  if (lower == "s") return 1000;
  if (lower == "m") return 60 * 1000;
  if (lower == "h") return 60 * 60 * 1000;
  return std::nullopt;
}

Error Invalid(std::string_view text, std::string_view why) {
  return Error(ErrorCode::kInvalidArgument,
               "invalid duration '" + std::string(text) + "': " + std::string(why));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLetter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// A term's number: whole digits, then an optional fraction (".5", "1.25").
struct Number {
  std::string_view whole;
  std::string_view fraction;
};

// Reads "<digits>[.<digits>]" from the front of `rest`, advancing it.
Result<Number> ReadNumber(std::string_view text, std::string_view& rest) {
  // A duration never has a sign.
  if (rest.front() == '-' || rest.front() == '+') {
    return Fail(Invalid(text, "a duration cannot be negative or signed; " + std::string(kExamples)));
  }
  size_t end = 0;
  while (end < rest.size() && IsDigit(rest[end])) ++end;
  Number number{rest.substr(0, end), {}};
  if (end < rest.size() && rest[end] == '.') {
    size_t digits = end + 1;
    while (digits < rest.size() && IsDigit(rest[digits])) ++digits;
    number.fraction = rest.substr(end + 1, digits - end - 1);
    if (number.fraction.empty()) {
      return Fail(Invalid(text, "expected digits after the decimal point, e.g. 1.5s"));
    }
    end = digits;
  }
  if (number.whole.empty() && number.fraction.empty()) {
    return Fail(Invalid(text, std::string("expected a number; ") + kExamples));
  }
  rest.remove_prefix(end);
  return number;
}

// `number` × `millis` in whole milliseconds; a fraction finer than that is refused.
Result<int64_t> ToMillis(std::string_view text, const Number& number, int64_t millis) {
  int64_t whole = 0;
  if (!number.whole.empty()) {
    auto [ptr, ec] =
        std::from_chars(number.whole.data(), number.whole.data() + number.whole.size(), whole);
    if (ec != std::errc() || whole > INT64_MAX / millis) {
      return Fail(Invalid(text, "number too large"));
    }
  }
  std::string_view fraction = number.fraction;
  while (!fraction.empty() && fraction.back() == '0') fraction.remove_suffix(1);
  // A millisecond is a millionth of the largest unit (h) at most: a seventh
  // significant decimal can never make a whole millisecond.
  constexpr size_t kMaxFractionDigits = 6;
  int64_t numerator = 0;
  int64_t denominator = 1;
  for (size_t i = 0; i < fraction.size() && i < kMaxFractionDigits; ++i) {
    numerator = numerator * 10 + (fraction[i] - '0');
    denominator *= 10;
  }
  if (fraction.size() > kMaxFractionDigits || numerator * millis % denominator != 0) {
    return Fail(Invalid(text, "finer than a millisecond; a duration counts whole milliseconds"));
  }
  const int64_t part = numerator * millis / denominator;
  if (whole * millis > INT64_MAX - part) return Fail(Invalid(text, "number too large"));
  return whole * millis + part;
}

// Reads one "<number><unit>" term from the front of `rest`, advancing it.
Result<int64_t> ParseTerm(std::string_view text, std::string_view& rest) {
  auto number = ReadNumber(text, rest);
  if (!number) return Fail(number.error());
  size_t unit_len = 0;
  while (unit_len < rest.size() && IsLetter(rest[unit_len])) ++unit_len;
  if (unit_len == 0 && !rest.empty()) {
    return Fail(Invalid(
        text, "unexpected '" + std::string(1, rest.front()) + "' after a number; " + kExamples));
  }
  if (unit_len == 0) return Fail(Invalid(text, std::string("missing unit; ") + kExamples));
  auto millis = UnitMillis(rest.substr(0, unit_len));
  if (!millis) {
    return Fail(Invalid(text, "unknown unit '" + std::string(rest.substr(0, unit_len)) +
                                  "' (valid units: ms, s, m, h)"));
  }
  rest.remove_prefix(unit_len);
  return ToMillis(text, *number, *millis);
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
