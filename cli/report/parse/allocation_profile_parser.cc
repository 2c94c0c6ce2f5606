// An allocation profile, version 1 (docs/protocol.md, "Allocation profiles"):
//
//   memprof allocation profile v1
//   <key>: <value>                      (any order; unknown keys ignored)
//   --- recent allocations
//   <one line of JSON: jemalloc's experimental.prof_recent.alloc_dump>
//   MAPPED_LIBRARIES:
//   <the process's /proc/<pid>/maps, verbatim>
//   --- end
//
// The final "--- end" is how a reader knows the file is whole.
#include "cli/report/parse/allocation_profile_parser.h"

#include <charconv>
#include <map>
#include <utility>

#include "cli/report/parse/dump_scanner.h"
#include "cli/report/parse/gzip_input.h"
#include "cli/report/parse/mapped_file.h"
#include "cli/report/parse/recent_alloc_json.h"

namespace memprof::report::parse {
namespace {

constexpr std::string_view kAllocationRecordsMarker = "--- recent allocations";
constexpr std::string_view kAllocationMapsMarker = "MAPPED_LIBRARIES:";
constexpr std::string_view kAllocationEndMarker = "--- end";
constexpr const char* kRequiredKeys[] = {
    "pid",           "created_unix_ms",     "window_start_unix_ms", "window_requested_ms",
    "window_start_ns", "window_end_ns",     "clock",                "clock_resolution_ns",
    "sample_interval", "record_bound"};

struct HeaderEntry {
  std::string_view text;
  size_t line = 0;
};

class AllocationProfileParser {
 public:
  AllocationProfileParser(std::string_view text, std::string_view source,
                          const AllocationParseLimits& limits)
      : rest_(text), size_(text.size()), source_(source), limits_(limits) {}

  Result<AllocationProfile> Run();

 private:
  // The next line into line_ (without '\n' and a '\r' before it); false at
  // the end of the input or for a last line without '\n' (a cut).
  bool NextLine();
  std::unexpected<Error> At(size_t line, const std::string& what) const {
    return Fail(ErrorCode::kInvalidArgument, source_ + ":" + std::to_string(line) + ": " + what);
  }
  std::unexpected<Error> Here(const std::string& what) const { return At(line_number_, what); }
  std::unexpected<Error> Truncated(const std::string& what) const {
    return At(line_number_, what + ": truncated at byte " + std::to_string(size_) + " (line " +
                                std::to_string(line_number_) + ")");
  }

  Result<void> FirstLine();
  Result<void> HeaderLines();
  Result<void> HeaderLine();
  Result<void> ConvertHeader();
  Result<uint64_t> Number(const char* key) const;
  Result<void> Optional();
  Result<void> JsonLine();
  Result<void> MapsLines();

  std::string_view rest_;
  size_t size_;
  std::string source_;
  AllocationParseLimits limits_;
  std::string_view line_;
  size_t line_number_ = 0;
  bool cut_ = false;  // the last line had no '\n'
  std::map<std::string, HeaderEntry, std::less<>> header_;
  size_t records_marker_line_ = 0;
  AllocationProfile profile_;
};

bool AllocationProfileParser::NextLine() {
  if (rest_.empty()) return false;
  ++line_number_;
  const size_t end = rest_.find('\n');
  if (end == std::string_view::npos) {
    cut_ = true;
    line_ = rest_;
    rest_ = {};
    return false;
  }
  line_ = rest_.substr(0, end);
  rest_.remove_prefix(end + 1);
  if (line_.ends_with('\r')) line_.remove_suffix(1);
  return true;
}

Result<void> AllocationProfileParser::FirstLine() {
  if (!NextLine()) {
    if (!cut_) return At(1, "empty input: expected an 'memprof allocation profile v1' header");
    return Truncated("input ends in the first line");
  }
  if (!line_.starts_with(kAllocationProfileMagic)) {
    return Here("not an allocation profile: expected 'memprof allocation profile v1', got " +
                Excerpt(line_));
  }
  const std::string_view version = line_.substr(kAllocationProfileMagic.size());
  int number = 0;
  auto [end, ec] = std::from_chars(version.data(), version.data() + version.size(), number);
  if (ec != std::errc() || end != version.data() + version.size() || number < 1) {
    return Here("bad allocation profile version " + Excerpt(version) + " (expected a number)");
  }
  if (number != kAllocationProfileVersion) {
    return Here("unsupported version " + std::to_string(number) +
                " of the allocation profile format (this memprofctl reads version " +
                std::to_string(kAllocationProfileVersion) + "; a newer memprofctl reads it)");
  }
  return {};
}

Result<void> AllocationProfileParser::HeaderLines() {
  while (NextLine()) {
    if (line_ == kAllocationRecordsMarker) {
      records_marker_line_ = line_number_;
      return ConvertHeader();
    }
    if (auto ok = HeaderLine(); !ok) return ok;
  }
  return Truncated("input ends in the header, before '--- recent allocations'");
}

Result<void> AllocationProfileParser::HeaderLine() {
  if (line_.size() > limits_.max_header_line_bytes) {
    return Here("header line is longer than " + std::to_string(limits_.max_header_line_bytes) +
                " bytes");
  }
  const size_t colon = line_.find(": ");
  if (colon == std::string_view::npos || colon == 0) {
    return Here("expected a 'key: value' header line or '--- recent allocations', got " +
                Excerpt(line_));
  }
  const std::string key(line_.substr(0, colon));
  if (header_.contains(key)) return Here("header key '" + key + "' appears twice");
  header_[key] = {Trim(line_.substr(colon + 2)), line_number_};
  return {};
}

Result<uint64_t> AllocationProfileParser::Number(const char* key) const {
  const HeaderEntry& value = header_.find(key)->second;
  uint64_t number = 0;
  const std::string_view text = value.text;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return At(value.line, std::string("header key '") + key +
                              "': expected a non-negative decimal number, got " + Excerpt(text));
  }
  return number;
}

Result<void> AllocationProfileParser::ConvertHeader() {
  for (const char* key : kRequiredKeys) {
    if (!header_.contains(key)) {
      return Here(std::string("the header lacks the required key '") + key + "'");
    }
  }
  AllocationProfileHeader& h = profile_.header;
  uint64_t created = 0;
  uint64_t started = 0;
  const std::pair<const char*, uint64_t*> numbers[] = {
      {"pid", &h.pid},
      {"created_unix_ms", &created},
      {"window_start_unix_ms", &started},
      {"window_requested_ms", &h.window_requested_ms},
      {"window_start_ns", &h.window_start_ns},
      {"window_end_ns", &h.window_end_ns},
      {"clock_resolution_ns", &h.clock_resolution_ns},
      {"sample_interval", &h.sample_interval},
      {"record_bound", &h.record_bound}};
  for (const auto& [key, into] : numbers) {
    auto value = Number(key);
    if (!value) return Fail(value.error());
    *into = *value;
  }
  h.created_unix_ms = static_cast<int64_t>(created);
  h.window_start_unix_ms = static_cast<int64_t>(started);
  h.clock = std::string(header_.find("clock")->second.text);
  if (h.window_end_ns < h.window_start_ns) {
    return At(header_.find("window_end_ns")->second.line,
              "window_end_ns " + std::to_string(h.window_end_ns) + " is before window_start_ns " +
                  std::to_string(h.window_start_ns));
  }
  if (h.sample_interval == 0) {
    return At(header_.find("sample_interval")->second.line,
              "sample_interval is 0 (jemalloc's is a power of two, at least 1)");
  }
  return Optional();
}

// ended_by and records_lost: "duration" and 0 when absent.
Result<void> AllocationProfileParser::Optional() {
  if (auto it = header_.find("ended_by"); it != header_.end()) {
    const std::string_view end = it->second.text;
    if (end == "duration") {
      profile_.header.ended_by = WindowEnd::kDuration;
    } else if (end == "bound") {
      profile_.header.ended_by = WindowEnd::kBound;
    } else if (end == "client") {
      profile_.header.ended_by = WindowEnd::kClient;
    } else {
      return At(it->second.line,
                "header key 'ended_by': expected duration, bound or client, got " + Excerpt(end));
    }
  }
  if (auto it = header_.find("records_lost"); it != header_.end()) {
    if (it->second.text != "0" && it->second.text != "1") {
      return At(it->second.line,
                "header key 'records_lost': expected 0 or 1, got " + Excerpt(it->second.text));
    }
    profile_.header.records_lost = it->second.text == "1";
  }
  return {};
}

Result<void> AllocationProfileParser::JsonLine() {
  if (!NextLine()) {
    return Truncated(cut_ ? "the recent allocations JSON line is cut short"
                          : "input ends before the recent allocations JSON line");
  }
  auto parsed = ParseRecentAllocJson(line_, limits_.max_records, limits_.max_frames);
  if (!parsed) return Here(parsed.error().message);
  const uint64_t interval = profile_.header.sample_interval;
  if (parsed->sample_interval && *parsed->sample_interval != interval) {
    return Here("the JSON's sample_interval " + std::to_string(*parsed->sample_interval) +
                " differs from the header's " + std::to_string(interval));
  }
  profile_.records = std::move(parsed->records);
  return {};
}

Result<void> AllocationProfileParser::MapsLines() {
  if (!NextLine()) return Truncated("input ends before the MAPPED_LIBRARIES section");
  if (line_ != kAllocationMapsMarker) return Here("expected 'MAPPED_LIBRARIES:', got " + Excerpt(line_));
  while (NextLine()) {
    if (line_ == kAllocationEndMarker) {
      if (!rest_.empty()) return At(line_number_ + 1, "unexpected text after '--- end'");
      return {};
    }
    if (line_.size() > limits_.max_header_line_bytes) {
      return Here("MAPPED_LIBRARIES line is longer than " +
                  std::to_string(limits_.max_header_line_bytes) + " bytes");
    }
    if (profile_.mapped_libraries.size() == limits_.max_mapped_lines) {
      return Here("more than " + std::to_string(limits_.max_mapped_lines) +
                  " MAPPED_LIBRARIES lines");
    }
    profile_.mapped_libraries.emplace_back(line_);
  }
  return Truncated("input ends without the final '--- end' line");
}

Result<AllocationProfile> AllocationProfileParser::Run() {
  if (auto ok = FirstLine(); !ok) return Fail(ok.error());
  if (auto ok = HeaderLines(); !ok) return Fail(ok.error());
  if (auto ok = JsonLine(); !ok) return Fail(ok.error());
  if (auto ok = MapsLines(); !ok) return Fail(ok.error());
  return std::move(profile_);
}

}  // namespace

bool LooksLikeAllocationProfile(std::string_view text) {
  return text.starts_with(kAllocationProfileMagic);
}

// Reads only the start of the file: every report asks, and most files are
// big heap dumps.
bool IsAllocationProfileFile(const std::string& path) {
  // A gzip header is 10 bytes and more with a name or comment; deflate's
  // first block then gives the magic in far less than this.
  constexpr size_t kHeadBytes = 64 * 1024;
  Result<Fd> fd = OpenProfileFile(path);
  if (!fd) return false;
  const std::string head = ReadHead(fd->get(), kHeadBytes);
  if (!IsGzip(head)) return LooksLikeAllocationProfile(head);
  return LooksLikeAllocationProfile(GunzipPrefix(head, kAllocationProfileMagic.size()));
}

Result<AllocationProfile> ParseAllocationProfileText(std::string_view text,
                                                     std::string_view source_name,
                                                     const AllocationParseLimits& limits) {
  return AllocationProfileParser(text, source_name, limits).Run();
}

Result<AllocationProfile> ParseAllocationProfileFile(const std::string& path,
                                                     const AllocationParseLimits& limits) {
  Result<MappedFile> file = MappedFile::Open(path);
  if (!file) return Fail(file.error());
  if (!IsGzip(file->text())) return ParseAllocationProfileText(file->text(), path, limits);
  Result<std::string> text = Gunzip(file->text(), path, limits.max_gunzipped_bytes);
  if (!text) return Fail(text.error());
  return ParseAllocationProfileText(*text, path, limits);
}

}  // namespace memprof::report::parse
