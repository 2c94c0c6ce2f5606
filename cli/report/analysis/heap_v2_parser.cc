// The grammar, as jemalloc (src/prof_data.c) writes it:
//
//   heap_v2/<sample period>
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
#include "cli/report/analysis/heap_v2_parser.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

#include "cli/report/analysis/line_reader.h"
#include "cli/report/analysis/mapped_file.h"

namespace memprof::analysis {
namespace {

constexpr std::string_view kHeaderPrefix = "heap_v2/";
constexpr std::string_view kMapsMarker = "MAPPED_LIBRARIES:";
constexpr size_t kExcerptBytes = 40;
constexpr size_t kMaxHexDigits = 16;

// Errors of the per-field parsers carry only "what"; the parser adds where.
std::unexpected<Error> Bad(std::string what) {
  return Fail(ErrorCode::kInvalidArgument, std::move(what));
}

constexpr bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view Trim(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

// A short, printable rendering of untrusted input for an error message.
std::string Excerpt(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, kExcerptBytes)) {
    auto byte = static_cast<unsigned char>(c);
    if (std::isprint(byte) != 0) {
      out += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
      out += escaped;
    }
  }
  if (text.size() > kExcerptBytes) out += "...";
  return out + "'";
}

std::string Named(std::string_view kind, std::string_view what) {
  std::string name(kind);
  if (!name.empty()) name += ' ';
  return name += what;
}

constexpr int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "0x1a2b" or "1a2b": at most 16 digits, nothing else.
std::optional<uint64_t> ParseHexAddress(std::string_view token) {
  if (token.starts_with("0x") || token.starts_with("0X")) token.remove_prefix(2);
  if (token.empty() || token.size() > kMaxHexDigits) return std::nullopt;
  uint64_t value = 0;
  for (char c : token) {
    const int digit = HexDigit(c);
    if (digit < 0) return std::nullopt;
    value = value << 4 | static_cast<uint64_t>(digit);
  }
  return value;
}

// A cursor over one line for the small field parsers below.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  void SkipBlanks() {
    while (!text_.empty() && IsBlank(text_.front())) text_.remove_prefix(1);
  }
  bool Consume(char c) {
    if (text_.empty() || text_.front() != c) return false;
    text_.remove_prefix(1);
    return true;
  }
  bool AtEnd() const { return text_.empty(); }
  std::string_view rest() const { return text_; }

  // A decimal unsigned 64-bit number; `kind` and `what` name it in errors
  // ("in-use" "object count"), joined only when there is an error.
  Result<uint64_t> Decimal(std::string_view kind, std::string_view what) {
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(text_.data(), text_.data() + text_.size(), value);
    if (ec == std::errc::result_out_of_range) {
      return Bad(Named(kind, what) + " does not fit in 64 bits");
    }
    if (ec != std::errc() || end == text_.data()) {
      return Bad("expected " + Named(kind, what) + ", got " + Excerpt(text_));
    }
    text_.remove_prefix(static_cast<size_t>(end - text_.data()));
    return value;
  }

  // A code address: hex with an optional 0x (jemalloc prints 0 as "0").
  // Hand-rolled rather than from_chars: a dump holds a million of them.
  Result<uint64_t> Address() {
    size_t length = 0;
    while (length < text_.size() && !IsBlank(text_[length])) ++length;
    std::string_view token = text_.substr(0, length);
    text_.remove_prefix(length);
    std::optional<uint64_t> value = ParseHexAddress(token);
    if (!value) return Bad("bad stack address " + Excerpt(token));
    return *value;
  }

 private:
  std::string_view text_;
};

Result<void> Expect(Scanner& scanner, char c, std::string_view where) {
  scanner.SkipBlanks();
  if (scanner.Consume(c)) return {};
  return Bad(std::string("expected '") + c + "' " + std::string(where) + ", got " +
             Excerpt(scanner.rest()));
}

// "<objects>: <bytes>".
Result<RawCounts> ParsePair(Scanner& scanner, std::string_view kind) {
  RawCounts counts;
  scanner.SkipBlanks();
  auto objects = scanner.Decimal(kind, "object count");
  if (!objects) return Fail(objects.error());
  if (auto ok = Expect(scanner, ':', "after the object count"); !ok) return Fail(ok.error());
  scanner.SkipBlanks();
  auto bytes = scanner.Decimal(kind, "byte count");
  if (!bytes) return Fail(bytes.error());
  // Either would make jeprof divide by zero; jemalloc never writes them.
  if (*objects == 0 && *bytes != 0) {
    return Bad(std::string(kind) + " counts have " + std::to_string(*bytes) +
               " bytes in 0 objects");
  }
  if (*objects != 0 && *bytes == 0) {
    return Bad(std::string(kind) + " counts have " + std::to_string(*objects) +
               " objects of 0 bytes");
  }
  counts.objects = *objects;
  counts.bytes = *bytes;
  return counts;
}

// "<objects>: <bytes> [<objects>: <bytes>]", the part after "t*:".
Result<CountLine> ParseCountLine(Scanner& scanner) {
  CountLine line;
  auto inuse = ParsePair(scanner, "in-use");
  if (!inuse) return Fail(inuse.error());
  if (auto ok = Expect(scanner, '[', "before the accumulated counts"); !ok) return Fail(ok.error());
  auto alloc = ParsePair(scanner, "accumulated");
  if (!alloc) return Fail(alloc.error());
  if (auto ok = Expect(scanner, ']', "after the accumulated counts"); !ok) return Fail(ok.error());
  line.inuse = *inuse;
  line.alloc = *alloc;
  return line;
}

// The thread part of a counts line: "t*:" (kAllThreads) or "t<N>:".
constexpr uint64_t kAllThreads = UINT64_MAX;

Result<uint64_t> ParseThreadTag(Scanner& scanner) {
  if (!scanner.Consume('t'))
    return Bad("expected 't*:' or 't<thread>:', got " + Excerpt(scanner.rest()));
  uint64_t thread = kAllThreads;
  if (!scanner.Consume('*')) {
    auto id = scanner.Decimal("", "a thread number after 't'");
    if (!id) return Fail(id.error());
    thread = *id;
  }
  if (!scanner.Consume(':'))
    return Bad("expected ':' after the thread, got " + Excerpt(scanner.rest()));
  return thread;
}

struct ParsedCounts {
  uint64_t thread = kAllThreads;
  CountLine counts;
  std::string_view trailer;  // what follows ']' (a thread name in the header)
};

Result<ParsedCounts> ParseCountsLine(std::string_view line) {
  Scanner scanner(line);
  ParsedCounts parsed;
  auto thread = ParseThreadTag(scanner);
  if (!thread) return Fail(thread.error());
  auto counts = ParseCountLine(scanner);
  if (!counts) return Fail(counts.error());
  parsed.thread = *thread;
  parsed.counts = *counts;
  parsed.trailer = scanner.rest();
  if (!parsed.trailer.empty() && !IsBlank(parsed.trailer.front())) {
    return Bad("unexpected text after the counts: " + Excerpt(parsed.trailer));
  }
  parsed.trailer = Trim(parsed.trailer);
  return parsed;
}

Result<uint64_t> ParseHeader(std::string_view line) {
  if (!line.starts_with(kHeaderPrefix)) {
    return Bad("not a jemalloc heap profile: expected a 'heap_v2/<sample period>' header, got " +
               Excerpt(line));
  }
  Scanner scanner(line.substr(kHeaderPrefix.size()));
  auto period = scanner.Decimal("", "the sample period after 'heap_v2/'");
  if (!period) return Fail(period.error());
  if (!scanner.AtEnd())
    return Bad("unexpected text after the sample period: " + Excerpt(scanner.rest()));
  return *period;
}

// Hex digit values, kNotHex for every other byte.
constexpr uint8_t kNotHex = 0xff;
constexpr std::array<uint8_t, 256> kHexValues = [] {
  std::array<uint8_t, 256> values{};
  values.fill(kNotHex);
  for (int c = 0; c < 256; ++c) {
    const int digit = HexDigit(static_cast<char>(c));
    if (digit >= 0) values[static_cast<size_t>(c)] = static_cast<uint8_t>(digit);
  }
  return values;
}();

// ParseStack for a well-formed line, in one pass with a table lookup per
// digit (a dump holds a million addresses). False on anything unusual, for
// ParseStack to find and name it; `stack` is then unspecified.
bool ParseWellFormedStack(std::string_view line, size_t max_frames, std::vector<uint64_t>& stack) {
  stack.clear();
  const char* p = line.data() + 1;  // after '@'
  const char* const end = line.data() + line.size();
  for (;;) {
    while (p != end && IsBlank(*p)) ++p;
    if (p == end) return !stack.empty();
    if (stack.size() == max_frames) return false;
    if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
    const char* const digits = p;
    uint64_t value = 0;
    for (uint8_t digit; p != end && (digit = kHexValues[static_cast<uint8_t>(*p)]) != kNotHex; ++p) {
      value = value << 4 | digit;
    }
    const auto length = static_cast<size_t>(p - digits);
    if (length == 0 || length > kMaxHexDigits || (p != end && !IsBlank(*p))) return false;
    stack.push_back(value);
  }
}

// The addresses of a '@' line into `stack` (cleared first), which the caller
// reuses from line to line so that a stack costs one exact-size copy.
Result<void> ParseStack(std::string_view line, size_t max_frames, std::vector<uint64_t>& stack) {
  if (ParseWellFormedStack(line, max_frames, stack)) return {};
  Scanner scanner(line.substr(1));  // after '@'
  stack.clear();
  scanner.SkipBlanks();
  while (!scanner.AtEnd()) {
    if (stack.size() == max_frames) {
      return Bad("stack has more than " + std::to_string(max_frames) + " frames");
    }
    auto address = scanner.Address();
    if (!address) return Fail(address.error());
    stack.push_back(*address);
    scanner.SkipBlanks();
  }
  if (stack.empty()) return Bad("stack line '@' has no addresses");
  return {};
}

// The state machine over lines. One instance parses one input, fed by a
// LineReader (a stream) or a BufferLineReader (a mapped file).
class HeapV2Parser {
 public:
  HeapV2Parser(std::string_view source, const ParseLimits& limits)
      : source_(source), limits_(limits) {}

  template <typename Reader>
  Result<HeapDump> Run(Reader& reader);

 private:
  enum class State { kHeader, kTotals, kThreads, kStackCounts, kStackThreads, kMaps };

  std::unexpected<Error> At(size_t line, ErrorCode code, const std::string& what) const {
    return Fail(code, source_ + ":" + std::to_string(line) + ": " + what);
  }
  std::unexpected<Error> Here(const Error& error) const {
    return At(line_number_, error.code, error.message);
  }

  Result<void> ReadLine(std::string_view line, bool had_newline);
  Result<void> BodyLine(std::string_view line);
  Result<void> CountsLine(std::string_view line);
  Result<void> StackLine(std::string_view line);
  Result<void> MapsLine(std::string_view line);
  Result<void> Finish() const;

  std::string source_;
  ParseLimits limits_;
  State state_ = State::kHeader;
  size_t line_number_ = 0;  // of the line being parsed
  size_t stack_line_ = 0;   // where the current record's '@' line is
  std::vector<uint64_t> stack_;  // the '@' line being parsed; reused
  HeapDump dump_;
};

template <typename Reader>
Result<HeapDump> HeapV2Parser::Run(Reader& reader) {
  for (;;) {
    const LineReader::Status status = reader.Next();
    line_number_ = reader.line_number();
    switch (status) {
      case LineReader::Status::kLine:
        if (auto ok = ReadLine(reader.line(), reader.had_newline()); !ok) return Fail(ok.error());
        continue;
      case LineReader::Status::kEnd:
        if (auto ok = Finish(); !ok) return Fail(ok.error());
        return std::move(dump_);
      case LineReader::Status::kTooLong:
        return At(line_number_, ErrorCode::kInvalidArgument,
                  "line is longer than " + std::to_string(limits_.max_line_bytes) + " bytes");
      case LineReader::Status::kReadError:
        return At(line_number_, ErrorCode::kDataLoss, "read error");
    }
  }
}

Result<void> HeapV2Parser::ReadLine(std::string_view line, bool had_newline) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  if (line.find('\0') != std::string_view::npos) {
    return Here(Error(ErrorCode::kInvalidArgument, "NUL byte in line (binary data?)"));
  }
  if (state_ == State::kMaps) return MapsLine(line);
  line = Trim(line);
  if (!had_newline && line != kMapsMarker) {
    return Here(
        Error(ErrorCode::kDataLoss, "input ends in the middle of this line (truncated dump)"));
  }
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
  if (auto ok = ParseStack(line, limits_.max_frames, stack_); !ok) return Here(ok.error());
  dump_.records.push_back({std::vector<uint64_t>(stack_.begin(), stack_.end()), {}});
  stack_line_ = line_number_;
  state_ = State::kStackCounts;
  return {};
}

Result<void> HeapV2Parser::MapsLine(std::string_view line) {
  if (dump_.mapped_libraries.size() == limits_.max_mapped_lines) {
    return Here(
        Error(ErrorCode::kInvalidArgument,
              "more than " + std::to_string(limits_.max_mapped_lines) + " MAPPED_LIBRARIES lines"));
  }
  dump_.mapped_libraries.emplace_back(line);
  return {};
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
      return At(last, ErrorCode::kDataLoss, "input ends after the header, before the 't*:' totals");
    case State::kStackCounts:
      return At(stack_line_, ErrorCode::kDataLoss,
                "stack has no 't*:' counts line: input ends (truncated dump)");
    case State::kThreads:
    case State::kStackThreads:
      return At(last, ErrorCode::kDataLoss,
                "input ends without the MAPPED_LIBRARIES section (truncated dump)");
    case State::kMaps:
      return {};
  }
  return {};
}

}  // namespace

Result<HeapDump> ParseHeapV2(std::istream& in, std::string_view source_name,
                             const ParseLimits& limits) {
  LineReader reader(in, limits.max_line_bytes);
  return HeapV2Parser(source_name, limits).Run(reader);
}

Result<HeapDump> ParseHeapV2Text(std::string_view text, std::string_view source_name,
                                 const ParseLimits& limits) {
  BufferLineReader reader(text, limits.max_line_bytes);
  return HeapV2Parser(source_name, limits).Run(reader);
}

Result<HeapDump> ParseHeapV2File(const std::string& path, const ParseLimits& limits) {
  Result<MappedFile> file = MappedFile::Open(path);
  if (!file) return Fail(file.error());
  return ParseHeapV2Text(file->text(), path, limits);
}

}  // namespace memprof::analysis
