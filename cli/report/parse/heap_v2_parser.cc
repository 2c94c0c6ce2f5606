// The grammar, as jemalloc (src/prof_data.c) writes it:
//
//   heap_v2/<sample period>
//   # memprof_sampler since_unix_ms=<ms> dropped=<n>          (memprof's sampler only)
//     t*: <objects>: <bytes> [<accum objects>: <accum bytes>]
//     t<thread>: <objects>: <bytes> [<accum objects>: <accum bytes>][ <thread name>]   (0..n)
//   @ 0x<addr> 0x<addr> ...                                                          (0..n)
//     t*: <objects>: <bytes> [<accum objects>: <accum bytes>]
//     t<thread>: <objects>: <bytes> [<accum objects>: <accum bytes>]                 (0..n)
//   <empty line>
//   MAPPED_LIBRARIES:
//   <the process's /proc/<pid>/maps, verbatim>
//
// Whitespace around fields is free (jeprof trims it), '\r' before '\n' is
// dropped (jeprof does too), and empty lines before the maps are ignored.
#include "cli/report/parse/heap_v2_parser.h"

#include <cstdio>
#include <optional>
#include <utility>

#include "cli/report/parse/dump_line_parser.h"
#include "cli/report/parse/dump_scanner.h"
#include "cli/report/parse/mapped_file.h"

namespace memprof::report::parse {
namespace {

constexpr std::string_view kHeaderPrefix = "heap_v2/";

// The thread part of a counts line: "t*:" (kAllThreads) or "t<N>:".
constexpr uint64_t kAllThreads = UINT64_MAX;

Result<uint64_t> ParseThreadTag(DumpScanner& scanner) {
  if (!scanner.Consume('t'))
    return BadField("expected 't*:' or 't<thread>:', got " + Excerpt(scanner.rest()));
  uint64_t thread = kAllThreads;
  if (!scanner.Consume('*')) {
    auto id = scanner.Decimal("", "a thread number after 't'");
    if (!id) return Fail(id.error());
    thread = *id;
  }
  if (!scanner.Consume(':'))
    return BadField("expected ':' after the thread, got " + Excerpt(scanner.rest()));
  return thread;
}

struct ParsedCounts {
  uint64_t thread = kAllThreads;
  CountLine counts;
  std::string_view trailer;  // what follows ']' (a thread name in the header)
};

Result<ParsedCounts> ParseCountsLine(std::string_view line) {
  DumpScanner scanner(line);
  ParsedCounts parsed;
  auto thread = ParseThreadTag(scanner);
  if (!thread) return Fail(thread.error());
  auto counts = ParseCountLine(scanner);
  if (!counts) return Fail(counts.error());
  parsed.thread = *thread;
  parsed.counts = *counts;
  parsed.trailer = scanner.rest();
  if (!parsed.trailer.empty() && !IsBlank(parsed.trailer.front())) {
    return BadField("unexpected text after the counts: " + Excerpt(parsed.trailer));
  }
  parsed.trailer = Trim(parsed.trailer);
  return parsed;
}

Result<uint64_t> ParseHeader(std::string_view line) {
  if (!line.starts_with(kHeaderPrefix)) {
    return BadField("not a jemalloc heap profile: expected a 'heap_v2/<sample period>' header, got " +
               Excerpt(line));
  }
  DumpScanner scanner(line.substr(kHeaderPrefix.size()));
  auto period = scanner.Decimal("", "the sample period after 'heap_v2/'");
  if (!period) return Fail(period.error());
  if (!scanner.AtEnd())
    return BadField("unexpected text after the sample period: " + Excerpt(scanner.rest()));
  return *period;
}

constexpr std::string_view kSamplerPrefix = "# memprof_sampler";

// "# memprof_sampler since_unix_ms=<ms> dropped=<count>": fields are
// key=value words; unknown keys are left for later versions.
Result<SamplerCoverage> ParseSamplerLine(std::string_view line) {
  SamplerCoverage coverage;
  std::string_view rest = line.substr(kSamplerPrefix.size());
  while (!(rest = Trim(rest)).empty()) {
    const std::string_view word = rest.substr(0, rest.find_first_of(" \t"));
    rest.remove_prefix(word.size());
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) return BadField("expected key=value, got " + Excerpt(word));
    const std::string key(word.substr(0, eq));
    if (key != "since_unix_ms" && key != "dropped") continue;
    DumpScanner value(word.substr(eq + 1));
    auto number = value.Decimal("", key);
    if (!number) return Fail(number.error());
    if (!value.AtEnd()) return BadField("unexpected text after " + key + ": " + Excerpt(word));
    if (key == "dropped") coverage.dropped = *number;
    if (key == "since_unix_ms") coverage.since_unix_ms = static_cast<int64_t>(*number);
  }
  return coverage;
}

// The end address of a /proc/<pid>/maps line ("start-end perms ..."), or
// nullopt when the line does not start like one.
std::optional<uint64_t> MappingEnd(std::string_view line) {
  const size_t dash = line.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(dash + 1);
  return ParseHexAddress(rest.substr(0, rest.find(' ')));
}

std::string Hex(uint64_t address) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
  return text;
}

// The state machine over the lines of one input.
class HeapV2Parser : public DumpLineParser<HeapV2Parser> {
 public:
  using DumpLineParser::DumpLineParser;

  Result<void> ReadLine(std::string_view line);
  Result<void> Finish() const;

 private:
  enum class State { kHeader, kTotals, kThreads, kStackCounts, kStackThreads, kMaps };

  Result<void> CheckMapsCoverStacks() const;

  bool TakeWellFormedStackLine(std::string_view raw);
  void AddRecord();
  Result<void> BodyLine(std::string_view line);
  Result<void> CountsLine(std::string_view line);
  Result<void> StackLine(std::string_view line);

  State state_ = State::kHeader;
  size_t stack_line_ = 0;        // where the current record's '@' line is
  std::vector<uint64_t> stack_;  // the '@' line being parsed; reused
};

Result<void> HeapV2Parser::ReadLine(std::string_view raw) {
  if (TakeWellFormedStackLine(raw)) return {};
  auto cleaned = CleanLine(raw);
  if (!cleaned) return Fail(cleaned.error());
  std::string_view line = *cleaned;
  if (state_ == State::kMaps) return MapsLine(line);
  line = Trim(line);
  if (state_ == State::kHeader) {
    auto period = ParseHeader(line);
    if (!period) return Here(period.error());
    dump_.sample_period = *period;
    state_ = State::kTotals;
    return {};
  }
  return BodyLine(line);
}

Result<void> HeapV2Parser::BodyLine(std::string_view line) {
  if (state_ == State::kStackCounts && !line.starts_with("t*:")) {
    return Here(Error(ErrorCode::kInvalidArgument,
                      "expected the 't*:' counts of the stack at line " +
                          std::to_string(stack_line_) + ", got " + Excerpt(line)));
  }
  if (line.empty()) return {};
  if (line.front() == 't') return CountsLine(line);
  if (state_ == State::kTotals && line.starts_with(kSamplerPrefix) && !dump_.sampler) {
    auto coverage = ParseSamplerLine(line);
    if (!coverage) return Here(coverage.error());
    dump_.sampler = *coverage;
    return {};
  }
  if (state_ == State::kTotals) {
    return Here(Error(ErrorCode::kInvalidArgument,
                      "expected the 't*:' totals line after the header, got " + Excerpt(line)));
  }
  if (line.front() == '@') return StackLine(line);
  if (line == kMapsMarker) {
    state_ = State::kMaps;
    return {};
  }
  return Here(Error(ErrorCode::kInvalidArgument, "unexpected line " + Excerpt(line)));
}

Result<void> HeapV2Parser::CountsLine(std::string_view line) {
  auto parsed = ParseCountsLine(line);
  if (!parsed) return Here(parsed.error());
  bool all = parsed->thread == kAllThreads;
  if (state_ == State::kTotals || state_ == State::kStackCounts) {
    if (!all)
      return Here(Error(ErrorCode::kInvalidArgument, "expected 't*:', got " + Excerpt(line)));
  } else if (all) {
    return Here(
        Error(ErrorCode::kInvalidArgument, "'t*:' line without a '@' stack line before it"));
  }
  if (!parsed->trailer.empty() && state_ != State::kThreads) {
    return Here(Error(ErrorCode::kInvalidArgument,
                      "unexpected text after the counts: " + Excerpt(parsed->trailer)));
  }
  switch (state_) {
    case State::kTotals:
      dump_.totals = parsed->counts;
      state_ = State::kThreads;
      return {};
    case State::kStackCounts:
      dump_.records.back().counts = parsed->counts;
      state_ = State::kStackThreads;
      return {};
    case State::kThreads:
      if (dump_.threads.size() == limits_.max_threads) {
        return Here(Error(ErrorCode::kInvalidArgument,
                          "more than " + std::to_string(limits_.max_threads) + " threads"));
      }
      dump_.threads.push_back({parsed->thread, parsed->counts, std::string(parsed->trailer)});
      return {};
    default:
      return {};  // a stack's per-thread line: validated, not kept (see StackRecord)
  }
}

Result<void> HeapV2Parser::StackLine(std::string_view line) {
  if (dump_.records.size() == limits_.max_records) {
    return Here(Error(ErrorCode::kInvalidArgument,
                      "more than " + std::to_string(limits_.max_records) + " stacks"));
  }
  if (auto ok = ParseStackAddresses(line.substr(1), limits_.max_frames, stack_); !ok) return Here(ok.error());
  AddRecord();
  return {};
}

// Nearly every byte of a dump is in its '@' lines. A well-formed one, where
// a stack may come, is taken in one pass over it; anything else (a NUL
// byte, a '\r', blanks before the '@', a bad address, a record too many)
// fails the fast parse and goes the careful way, which names the problem.
bool HeapV2Parser::TakeWellFormedStackLine(std::string_view raw) {
  if (raw.empty() || raw.front() != '@') return false;
  if (state_ != State::kThreads && state_ != State::kStackThreads) return false;
  if (dump_.records.size() == limits_.max_records) return false;
  if (!ParseWellFormedStack(raw.substr(1), limits_.max_frames, stack_)) return false;
  AddRecord();
  return true;
}

// The stack in stack_ as the next record, whose counts come next.
void HeapV2Parser::AddRecord() {
  dump_.records.push_back({std::vector<uint64_t>(stack_.begin(), stack_.end()), {}});
  Observe(dump_.records.back().stack);
  stack_line_ = line_number_;
  state_ = State::kStackCounts;
}

// What the input must not end in: jemalloc always finishes a dump with the
// maps section, so anything else means it was cut short.
Result<void> HeapV2Parser::Finish() const {
  size_t last = line_number_ - 1;
  switch (state_) {
    case State::kHeader:
      return At(1, ErrorCode::kInvalidArgument,
                "empty input: expected a 'heap_v2/<sample period>' header");
    case State::kTotals:
      return Truncated(last, "input ends after the header, before the 't*:' totals");
    case State::kStackCounts:
      return Truncated(stack_line_, "stack has no 't*:' counts line");
    case State::kThreads:
    case State::kStackThreads:
      return Truncated(last, "input ends without the MAPPED_LIBRARIES section");
    case State::kMaps:
      return CheckMapsCoverStacks();
  }
  return {};
}

// jemalloc copies /proc/<pid>/maps verbatim, and the kernel lists mappings
// by ascending address, so a maps section cut on a line boundary lacks the
// highest mappings: the shared libraries, whose return addresses every
// stack holds. A stack address above the end of the last mapping listed is
// that cut (the kernel's own list ends with [vsyscall], [vdso] or [stack],
// above all code). Addresses in gaps between mappings (code unmapped since)
// stay legal. An empty section, or a last line that is not "start-end ...",
// cannot be judged and is accepted.
Result<void> HeapV2Parser::CheckMapsCoverStacks() const {
  if (dump_.mapped_libraries.empty()) return {};
  const std::optional<uint64_t> end = MappingEnd(dump_.mapped_libraries.back());
  if (!end) return {};
  for (const StackRecord& record : dump_.records) {
    for (uint64_t address : record.stack) {
      if (address < *end) continue;
      return Truncated(line_number_ - 1, "stack address " + Hex(address) +
                                             " lies above the last mapping of the "
                                             "MAPPED_LIBRARIES section (the section is cut short)");
    }
  }
  return {};
}

}  // namespace

Result<HeapDump> ParseHeapV2(std::istream& in, std::string_view source_name,
                             const ParseLimits& limits) {
  return ParseStream<HeapV2Parser>(in, source_name, limits);
}

Result<HeapDump> ParseHeapV2Text(std::string_view text, std::string_view source_name,
                                 const ParseLimits& limits, const StackObserver& observer) {
  return ParseInPlace<HeapV2Parser>(text, source_name, limits, observer);
}

Result<HeapDump> ParseHeapV2Lines(FileLineReader& reader, std::string_view source_name,
                                  const ParseLimits& limits, const StackObserver& observer) {
  return ParseFileLines<HeapV2Parser>(reader, source_name, limits, observer);
}

Result<HeapDump> ParseHeapV2File(const std::string& path, const ParseLimits& limits) {
  Result<Fd> fd = OpenProfileFile(path);
  if (!fd) return Fail(fd.error());
  FileLineReader reader(fd->get(), limits.max_line_bytes);
  return ParseHeapV2Lines(reader, path, limits);
}

}  // namespace memprof::report::parse
