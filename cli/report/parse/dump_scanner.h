#ifndef MEMPROF_CLI_REPORT_PARSE_DUMP_SCANNER_H_
#define MEMPROF_CLI_REPORT_PARSE_DUMP_SCANNER_H_

// The field parsers the heap profile parsers share (jemalloc's heap_v2 and
// gperftools' "heap profile:"): both write counts as "<objects>: <bytes>
// [<objects>: <bytes>]" and stacks as hex return addresses. Internal to the
// parsers. Errors carry only "what"; the parser adds "<file>:<line>: ".

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cli/report/parse/heap_v2_parser.h"
#include "common/result.h"

namespace memprof::report::parse {

inline bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view Trim(std::string_view text);

// A short, printable rendering of untrusted input for an error message.
std::string Excerpt(std::string_view text);

// "0x1a2b" or "1a2b": at most 16 digits, nothing else.
std::optional<uint64_t> ParseHexAddress(std::string_view token);

// kInvalidArgument with `what` (the parser adds where).
std::unexpected<Error> BadField(std::string what);

// A cursor over one line for the small field parsers.
class DumpScanner {
 public:
  explicit DumpScanner(std::string_view text) : text_(text) {}

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
    if (ec != std::errc() || end == text_.data()) return DecimalError(ec, kind, what);
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
    if (!value) return BadField("bad stack address " + Excerpt(token));
    return *value;
  }

 private:
  std::unexpected<Error> DecimalError(std::errc ec, std::string_view kind,
                                      std::string_view what) const;

  std::string_view text_;
};

// Skips blanks and consumes `c`, or says what came instead.
Result<void> ExpectChar(DumpScanner& scanner, char c, std::string_view where);

// What a pair of counts may hold. jemalloc never writes objects without
// bytes (jeprof would divide by zero); gperftools does for malloc(0).
enum class ZeroBytes { kReject, kAllow };

// "<objects>: <bytes> [<objects>: <bytes>]": in use, then accumulated.
Result<CountLine> ParseCountLine(DumpScanner& scanner, ZeroBytes zero_bytes = ZeroBytes::kReject);

// ParseStackAddresses for a well-formed stack, in one pass with a table
// lookup per digit (a dump holds a million addresses). False on anything
// unusual (a NUL byte, a '\r', a bad digit, too many frames), for the careful
// parser to find and name; `stack` is then unspecified.
bool ParseWellFormedStack(std::string_view text, size_t max_frames, std::vector<uint64_t>& stack);

// The addresses of a stack (the text after '@') into `stack`, cleared
// first; the caller reuses it from line to line so that a stack costs one
// exact-size copy. At least one address, at most `max_frames`.
Result<void> ParseStackAddresses(std::string_view text, size_t max_frames,
                                 std::vector<uint64_t>& stack);

}  // namespace memprof::report::parse

#endif  // MEMPROF_CLI_REPORT_PARSE_DUMP_SCANNER_H_
