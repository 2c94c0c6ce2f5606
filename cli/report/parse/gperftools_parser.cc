// The grammar, as gperftools 2.10 writes it (heap-profile-table.cc for the
// heap profiler, malloc_extension.cc and tcmalloc.cc for the sampler):
//
//   heap profile: <objs>: <bytes> [<objs>: <bytes>] @ heapprofile | heap_v2/<period>
//   <objs>: <bytes> [<objs>: <bytes>] @ 0x<addr> 0x<addr> ...      (0..n)
//   <empty line>
//   MAPPED_LIBRARIES:
//   <the process's /proc/self/maps, verbatim>
//
// Counts are "%6d: %8d", so blanks pad them; fields are trimmed as pprof
// does. Empty lines before the maps are ignored.
#include "cli/report/parse/gperftools_parser.h"

#include <utility>
#include <vector>

#include "cli/report/parse/dump_line_parser.h"
#include "cli/report/parse/dump_scanner.h"

namespace memprof::report::parse {
namespace {

constexpr std::string_view kGperftoolsHeaderPrefix = "heap profile:";
constexpr std::string_view kExactLabel = "heapprofile";
constexpr std::string_view kSampledLabel = "heap_v2/";

struct GperftoolsHeader {
  DumpFormat format = DumpFormat::kGperftoolsHeapProfile;
  uint64_t sample_period = 1;
  CountLine totals;
};

// What follows the header's '@': "heapprofile" or "heap_v2/<period>".
Result<void> ParseLabel(std::string_view label, GperftoolsHeader& header) {
  if (label == kExactLabel) return {};
  if (!label.starts_with(kSampledLabel)) {
    return BadField("unknown gperftools profile kind " + Excerpt(label) +
                    ": expected 'heapprofile' or 'heap_v2/<sample period>'");
  }
  DumpScanner scanner(label.substr(kSampledLabel.size()));
  auto period = scanner.Decimal("", "the sample period after 'heap_v2/'");
  if (!period) return Fail(period.error());
  if (!scanner.AtEnd()) {
    return BadField("unexpected text after the sample period: " + Excerpt(scanner.rest()));
  }
  header.format = DumpFormat::kGperftoolsHeapSample;
  header.sample_period = *period;
  return {};
}

Result<GperftoolsHeader> ParseGperftoolsHeader(std::string_view line) {
  if (!line.starts_with(kGperftoolsHeaderPrefix)) {
    return BadField("not a gperftools heap profile: expected a 'heap profile: ...' header, got " +
                    Excerpt(line));
  }
  DumpScanner scanner(line.substr(kGperftoolsHeaderPrefix.size()));
  GperftoolsHeader header;
  auto totals = ParseCountLine(scanner, ZeroBytes::kAllow);
  if (!totals) return Fail(totals.error());
  if (auto ok = ExpectChar(scanner, '@', "after the totals"); !ok) return Fail(ok.error());
  if (auto ok = ParseLabel(Trim(scanner.rest()), header); !ok) return Fail(ok.error());
  header.totals = *totals;
  return header;
}

// The state machine over the lines of one input.
class GperftoolsParser : public DumpLineParser<GperftoolsParser> {
 public:
  using DumpLineParser::DumpLineParser;

  Result<void> ReadLine(std::string_view line);
  Result<void> Finish() const;

 private:
  enum class State { kHeader, kStacks, kMaps };

  Result<void> HeaderLine(std::string_view line);
  Result<void> StackLine(std::string_view line);

  State state_ = State::kHeader;
  std::vector<uint64_t> stack_;  // the stack being parsed; reused
};

Result<void> GperftoolsParser::ReadLine(std::string_view raw) {
  auto cleaned = CleanLine(raw);
  if (!cleaned) return Fail(cleaned.error());
  std::string_view line = *cleaned;
  if (state_ == State::kMaps) return MapsLine(line);
  line = Trim(line);
  if (state_ == State::kHeader) return HeaderLine(line);
  if (line.empty()) return {};
  if (line == kMapsMarker) {
    state_ = State::kMaps;
    return {};
  }
  return StackLine(line);
}

Result<void> GperftoolsParser::HeaderLine(std::string_view line) {
  auto header = ParseGperftoolsHeader(line);
  if (!header) return Here(header.error());
  dump_.format = header->format;
  dump_.sample_period = header->sample_period;
  dump_.totals = header->totals;
  // The sampler's brackets repeat the sampled counts: nothing accumulated.
  if (dump_.format == DumpFormat::kGperftoolsHeapSample) dump_.totals.alloc = {};
  state_ = State::kStacks;
  return {};
}

Result<void> GperftoolsParser::StackLine(std::string_view line) {
  if (dump_.records.size() == limits_.max_records) {
    return Here(ErrorCode::kInvalidArgument,
                "more than " + std::to_string(limits_.max_records) + " stacks");
  }
  DumpScanner scanner(line);
  auto counts = ParseCountLine(scanner, ZeroBytes::kAllow);
  if (!counts) return Here(counts.error());
  if (auto ok = ExpectChar(scanner, '@', "before the stack"); !ok) return Here(ok.error());
  auto ok = ParseStackAddresses(scanner.rest(), limits_.max_frames, stack_);
  if (!ok) return Here(ok.error());
  if (dump_.format == DumpFormat::kGperftoolsHeapSample) counts->alloc = {};
  dump_.records.push_back({std::vector<uint64_t>(stack_.begin(), stack_.end()), *counts});
  Observe(dump_.records.back().stack);
  return {};
}

// gperftools always ends a profile with the maps section, so anything else
// means it was cut short.
Result<void> GperftoolsParser::Finish() const {
  if (state_ == State::kMaps) return {};
  if (state_ == State::kHeader) {
    return At(1, ErrorCode::kInvalidArgument, "empty input: expected a 'heap profile: ...' header");
  }
  return Truncated(line_number_ - 1, "input ends without the MAPPED_LIBRARIES section");
}

}  // namespace

Result<HeapDump> ParseGperftools(std::istream& in, std::string_view source_name,
                                 const ParseLimits& limits) {
  return ParseStream<GperftoolsParser>(in, source_name, limits);
}

Result<HeapDump> ParseGperftoolsText(std::string_view text, std::string_view source_name,
                                     const ParseLimits& limits, const StackObserver& observer) {
  return ParseInPlace<GperftoolsParser>(text, source_name, limits, observer);
}

Result<HeapDump> ParseGperftoolsLines(FileLineReader& reader, std::string_view source_name,
                                      const ParseLimits& limits, const StackObserver& observer) {
  return ParseFileLines<GperftoolsParser>(reader, source_name, limits, observer);
}

}  // namespace memprof::report::parse
