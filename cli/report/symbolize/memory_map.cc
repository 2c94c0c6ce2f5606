#include "cli/report/symbolize/memory_map.h"

#include <charconv>
#include <cstddef>
#include <utility>

#include "common/path.h"

namespace memprof::report::symbolize {
namespace {

constexpr std::string_view kDeletedSuffix = " (deleted)";

// Splits off the next whitespace-delimited field of `rest`.
std::string_view NextField(std::string_view& rest) {
  const size_t begin = rest.find_first_not_of(" \t");
  if (begin == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(begin);
  const size_t end = rest.find_first_of(" \t");
  const std::string_view field = rest.substr(0, end);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  return field;
}

// Whole-field number parse: "12x" or "" is an error, not 12 or 0.
std::optional<uint64_t> ParseNumber(std::string_view text, int base) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, base);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

bool ParseRange(std::string_view field, MemoryMapping& out) {
  const size_t dash = field.find('-');
  if (dash == std::string_view::npos) return false;
  const auto start = ParseNumber(field.substr(0, dash), 16);
  const auto end = ParseNumber(field.substr(dash + 1), 16);
  if (!start || !end || *start >= *end) return false;
  out.start = *start;
  out.end = *end;
  return true;
}

bool ValidPerms(std::string_view perms) {
  if (perms.size() != 4) return false;
  return (perms[0] == 'r' || perms[0] == '-') && (perms[1] == 'w' || perms[1] == '-') &&
         (perms[2] == 'x' || perms[2] == '-') && (perms[3] == 'p' || perms[3] == 's');
}

bool ValidDevice(std::string_view dev) {
  const size_t colon = dev.find(':');
  return colon != std::string_view::npos && ParseNumber(dev.substr(0, colon), 16) &&
         ParseNumber(dev.substr(colon + 1), 16);
}

// The path is everything after the inode field, spaces included; only the
// kernel's column padding before it and a line terminator after it go.
void SetPath(std::string_view rest, MemoryMapping& out) {
  const size_t begin = rest.find_first_not_of(" \t");
  rest = begin == std::string_view::npos ? std::string_view() : rest.substr(begin);
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == '\r')) rest.remove_suffix(1);
  if (rest.ends_with(kDeletedSuffix)) {
    rest.remove_suffix(kDeletedSuffix.size());
    out.deleted = true;
  }
  out.path = std::string(rest);
}

}  // namespace

std::string MemoryMapping::Basename() const { return std::string(PathBasename(path)); }

std::optional<MemoryMapping> ParseMemoryMapLine(std::string_view line) {
  MemoryMapping mapping;
  std::string_view rest = line;
  if (!ParseRange(NextField(rest), mapping)) return std::nullopt;
  const std::string_view perms = NextField(rest);
  if (!ValidPerms(perms)) return std::nullopt;
  mapping.perms = std::string(perms);
  const auto offset = ParseNumber(NextField(rest), 16);
  if (!offset || !ValidDevice(NextField(rest))) return std::nullopt;
  mapping.offset = *offset;
  const auto inode = ParseNumber(NextField(rest), 10);
  if (!inode) return std::nullopt;
  mapping.inode = *inode;
  SetPath(rest, mapping);
  return mapping;
}

ParsedMemoryMap ParseMemoryMap(std::span<const std::string> lines) {
  ParsedMemoryMap parsed;
  for (const std::string& line : lines) {
    if (line.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    if (auto mapping = ParseMemoryMapLine(line)) {
      parsed.mappings.push_back(std::move(*mapping));
    } else {
      ++parsed.skipped;
    }
  }
  return parsed;
}

}  // namespace memprof::report::symbolize
