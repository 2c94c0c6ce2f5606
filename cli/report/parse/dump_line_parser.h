#ifndef MEMPROF_CLI_REPORT_PARSE_DUMP_LINE_PARSER_H_
#define MEMPROF_CLI_REPORT_PARSE_DUMP_LINE_PARSER_H_

// What the heap profile parsers (heap_v2_parser.cc, gperftools_parser.cc)
// share around their state machines: the loop over lines, fed by a
// LineReader (a stream) or a BufferLineReader (a mapped file), errors
// "<source>:<line>: <what>", and the bounded MAPPED_LIBRARIES section.
// Internal to the parsers. `Derived` provides
//   Result<void> ReadLine(std::string_view line);
//   Result<void> Finish() const;   // at end of input
// and calls CleanLine and MapsLine from ReadLine.
//
// A dump cut short is malformed input (kInvalidArgument, exit 2), and its
// error says where it ends: "...: truncated at byte N (line L)". Both tools
// end every line with '\n' (the maps section is the kernel's text), so a
// last line without one is always a cut.

#include <cstddef>
#include <cstdint>
#include <istream>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "cli/report/parse/heap_v2_parser.h"
#include "cli/report/parse/line_reader.h"
#include "common/result.h"

namespace memprof::report::parse {

inline constexpr std::string_view kMapsMarker = "MAPPED_LIBRARIES:";

template <typename Derived>
class DumpLineParser {
 public:
  DumpLineParser(std::string_view source, const ParseLimits& limits, StackObserver observer = {})
      : source_(source), limits_(limits), observer_(std::move(observer)) {}

  template <typename Reader>
  Result<HeapDump> Run(Reader& reader) {
    for (;;) {
      const LineReader::Status status = reader.Next();
      line_number_ = reader.line_number();
      switch (status) {
        case LineReader::Status::kLine:
          bytes_read_ = reader.bytes_read();
          last_line_ = line_number_;
          if (!reader.had_newline()) {
            return Truncated(line_number_, "input ends in the middle of this line");
          }
          if (auto ok = self().ReadLine(reader.line()); !ok) return Fail(ok.error());
          continue;
        case LineReader::Status::kEnd:
          if (auto ok = self().Finish(); !ok) return Fail(ok.error());
          return std::move(dump_);
        case LineReader::Status::kTooLong:
          return At(line_number_, ErrorCode::kInvalidArgument,
                    "line is longer than " + std::to_string(limits_.max_line_bytes) + " bytes");
        case LineReader::Status::kReadError:
          return At(line_number_, ErrorCode::kDataLoss, "read error");
      }
    }
  }

 protected:
  std::unexpected<Error> At(size_t line, ErrorCode code, const std::string& what) const {
    return Fail(code, source_ + ":" + std::to_string(line) + ": " + what);
  }
  // A dump that ends early; `line` is where the error points, the message
  // names where the input ends.
  std::unexpected<Error> Truncated(size_t line, const std::string& what) const {
    return At(line, ErrorCode::kInvalidArgument,
              what + ": truncated at byte " + std::to_string(bytes_read_) + " (line " +
                  std::to_string(last_line_) + ")");
  }
  std::unexpected<Error> Here(const Error& error) const {
    return At(line_number_, error.code, error.message);
  }
  std::unexpected<Error> Here(ErrorCode code, const std::string& what) const {
    return At(line_number_, code, what);
  }

  // Drops a '\r' before the '\n' (jeprof and pprof do too); binary data
  // (a NUL byte) is an error.
  Result<std::string_view> CleanLine(std::string_view line) const {
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.find('\0') != std::string_view::npos) {
      return Here(ErrorCode::kInvalidArgument, "NUL byte in line (binary data?)");
    }
    return line;
  }

  // One line of the maps section, verbatim.
  Result<void> MapsLine(std::string_view line) {
    if (dump_.mapped_libraries.size() == limits_.max_mapped_lines) {
      return Here(ErrorCode::kInvalidArgument, "more than " +
                                                   std::to_string(limits_.max_mapped_lines) +
                                                   " MAPPED_LIBRARIES lines");
    }
    dump_.mapped_libraries.emplace_back(line);
    return {};
  }

  // A stack the dump's record holds, for the observer if there is one.
  void Observe(std::span<const uint64_t> stack) const {
    if (observer_) observer_(stack);
  }

  std::string source_;
  ParseLimits limits_;
  StackObserver observer_;
  size_t line_number_ = 0;  // of the line being parsed
  size_t last_line_ = 0;    // the last line read: where the input ends
  size_t bytes_read_ = 0;   // up to the end of that line
  HeapDump dump_;

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
};

// Runs a fresh `Parser` over a stream (bounded memory), a file read through
// a buffer, or text in memory (in place): the ways every parser is offered.
template <typename Parser>
Result<HeapDump> ParseStream(std::istream& in, std::string_view source, const ParseLimits& limits) {
  LineReader reader(in, limits.max_line_bytes);
  return Parser(source, limits).Run(reader);
}

template <typename Parser>
Result<HeapDump> ParseFileLines(FileLineReader& reader, std::string_view source,
                                const ParseLimits& limits, const StackObserver& observer = {}) {
  return Parser(source, limits, observer).Run(reader);
}

template <typename Parser>
Result<HeapDump> ParseInPlace(std::string_view text, std::string_view source,
                              const ParseLimits& limits, const StackObserver& observer = {}) {
  BufferLineReader reader(text, limits.max_line_bytes);
  return Parser(source, limits, observer).Run(reader);
}

}  // namespace memprof::report::parse

#endif  // MEMPROF_CLI_REPORT_PARSE_DUMP_LINE_PARSER_H_
