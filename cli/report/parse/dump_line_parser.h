#ifndef MEMPROF_CLI_REPORT_PARSE_DUMP_LINE_PARSER_H_
#define MEMPROF_CLI_REPORT_PARSE_DUMP_LINE_PARSER_H_

// What the heap profile parsers (heap_v2_parser.cc, gperftools_parser.cc)
// share around their state machines: the loop over lines, fed by a
// LineReader (a stream) or a BufferLineReader (a mapped file), errors
// "<source>:<line>: <what>", and the bounded MAPPED_LIBRARIES section.
// Internal to the parsers. `Derived` provides
//   Result<void> ReadLine(std::string_view line, bool had_newline);
//   Result<void> Finish() const;   // at end of input
// and calls CleanLine and MapsLine from ReadLine.

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <utility>

#include "cli/report/parse/heap_v2_parser.h"
#include "cli/report/parse/line_reader.h"
#include "common/result.h"

namespace memprof::analysis {

inline constexpr std::string_view kMapsMarker = "MAPPED_LIBRARIES:";

template <typename Derived>
class DumpLineParser {
 public:
  DumpLineParser(std::string_view source, const ParseLimits& limits)
      : source_(source), limits_(limits) {}

  template <typename Reader>
  Result<HeapDump> Run(Reader& reader) {
    for (;;) {
      const LineReader::Status status = reader.Next();
      line_number_ = reader.line_number();
      switch (status) {
        case LineReader::Status::kLine:
          if (auto ok = self().ReadLine(reader.line(), reader.had_newline()); !ok) {
            return Fail(ok.error());
          }
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

  std::string source_;
  ParseLimits limits_;
  size_t line_number_ = 0;  // of the line being parsed
  HeapDump dump_;

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
};

// Runs a fresh `Parser` over a stream (bounded memory) or over text in
// memory (in place): the two ways every parser is offered.
template <typename Parser>
Result<HeapDump> ParseStream(std::istream& in, std::string_view source, const ParseLimits& limits) {
  LineReader reader(in, limits.max_line_bytes);
  return Parser(source, limits).Run(reader);
}

template <typename Parser>
Result<HeapDump> ParseInPlace(std::string_view text, std::string_view source,
                              const ParseLimits& limits) {
  BufferLineReader reader(text, limits.max_line_bytes);
  return Parser(source, limits).Run(reader);
}

}  // namespace memprof::analysis

#endif  // MEMPROF_CLI_REPORT_PARSE_DUMP_LINE_PARSER_H_
