#ifndef MEMPROF_CLI_EXPORTER_SYMBOL_QUERY_H_
#define MEMPROF_CLI_EXPORTER_SYMBOL_QUERY_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace memprof::cli {

// The most addresses one symbol request may ask for. pprof asks once per
// mapping of the profile that is not fully named, for the locations in it
// that have no name: a few hundred in a big profile. The request body is
// bounded by the server (HttpServerLimits::max_body_bytes) too.
inline constexpr size_t kMaxSymbolAddresses = 65536;

// The body of POST /debug/pprof/symbol, as pprof sends it (and Go's
// net/http/pprof reads it): hexadecimal addresses with their 0x, joined by
// '+' ("0x4a1f2c+0x4a2b10"); surrounding white space is ignored.
// kInvalidArgument for an empty body, a word that is not such an address
// (naming it), or more than kMaxSymbolAddresses addresses.
[[nodiscard]] Result<std::vector<uint64_t>> ParseSymbolRequest(std::string_view body);

// The answer: "0x4a1f2c name\n" for each address with a name, in the
// request's order; an empty name (none known) leaves its address out, as
// Go's handler leaves out what it cannot name. `names` has one entry per
// address.
std::string FormatSymbolAnswer(std::span<const uint64_t> addresses,
                               std::span<const std::string> names);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_SYMBOL_QUERY_H_
