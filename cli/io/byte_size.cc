#include "cli/io/byte_size.h"

#include <bit>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>

#include "common/sample_interval.h"

namespace memprof::cli {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<uint64_t> UnitBytes(std::string_view unit) {
  const std::string lower = Lower(unit);
  if (lower.empty() || lower == "b") return 1;
  if (lower == "kib") return uint64_t{1} << 10;
  if (lower == "mib") return uint64_t{1} << 20;
  if (lower == "gib") return uint64_t{1} << 30;
  return std::nullopt;
}

// Why `unit` is not accepted.
std::string UnitProblem(std::string_view unit) {
  const std::string lower = Lower(unit);
  for (const char* si : {"k", "m", "g", "kb", "mb", "gb"}) {
    if (lower == si) {
      return "unit '" + std::string(unit) + "' is ambiguous (1000 or 1024?); write " +
             static_cast<char>(std::toupper(static_cast<unsigned char>(lower[0]))) +
             "iB for the binary unit";
    }
  }
  return "unknown unit '" + std::string(unit) + "'";
}

Error Invalid(std::string_view text, const std::string& why) {
  return Error(ErrorCode::kInvalidArgument, "invalid size '" + std::string(text) + "': " + why +
                                                "; valid forms: " + kByteSizeForms);
}

}  // namespace

Result<uint64_t> ParseByteSize(std::string_view text) {
  if (text.empty()) return Fail(Invalid(text, "empty"));
  if (text.front() == '-' || text.front() == '+') {
    return Fail(Invalid(text, "a size cannot be negative or signed"));
  }
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) return Fail(Invalid(text, "number too large"));
  if (ec != std::errc()) return Fail(Invalid(text, "expected a number"));
  const std::string_view unit = text.substr(static_cast<size_t>(ptr - text.data()));
  if (!unit.empty() && (unit.front() == '.' || unit.front() == ',')) {
    return Fail(Invalid(text,
                        "fractions are not accepted; use a smaller unit (1536KiB, not "
                        "1.5MiB)"));
  }
  const auto multiplier = UnitBytes(unit);
  if (!multiplier) return Fail(Invalid(text, UnitProblem(unit)));
  if (value > UINT64_MAX / *multiplier) return Fail(Invalid(text, "number too large"));
  return value * *multiplier;
}

uint64_t NearestPowerOfTwo(uint64_t bytes) {
  if (bytes <= 1) return 1;
  if (std::has_single_bit(bytes)) return bytes;
  const uint64_t below = std::bit_floor(bytes);
  if (below == (uint64_t{1} << 63)) return below;  // no power of two above fits
  const uint64_t above = below << 1;
  return bytes - below < above - bytes ? below : above;
}

Result<SampleIntervalChoice> ParseSampleInterval(std::string_view text) {
  auto bytes = ParseByteSize(text);
  if (!bytes) return Fail(bytes.error());
  if (*bytes < kMinSampleIntervalBytes || *bytes > kMaxSampleIntervalBytes) {
    return Fail(Invalid(text, "a sample interval must be between 1 B and 1 GiB"));
  }
  return SampleIntervalChoice{*bytes, NearestPowerOfTwo(*bytes)};
}

Result<uint64_t> ParseCaptureGrowth(std::string_view text) {
  auto bytes = ParseByteSize(text);
  if (!bytes) return Fail(bytes.error());
  if (*bytes < kMinCaptureGrowthBytes || *bytes > kMaxCaptureGrowthBytes) {
    return Fail(Invalid(text, "a capture growth must be between 1 MiB and 1024 GiB"));
  }
  return *bytes;
}

Result<uint32_t> ParseNearLimitShare(std::string_view text) {
  std::string_view digits = text;
  if (digits.ends_with('%')) digits.remove_suffix(1);
  uint32_t percent = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), percent);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
      percent < 1 || percent > 99) {
    return Fail(ErrorCode::kInvalidArgument,
                "invalid share '" + std::string(text) +
                    "': a share of the memory limit must be a whole percentage from 1% to 99%, "
                    "e.g. 90%");
  }
  return percent;
}

}  // namespace memprof::cli
