#ifndef MEMPROF_CLI_REPORT_AGGREGATE_SYMBOLIZATION_H_
#define MEMPROF_CLI_REPORT_AGGREGATE_SYMBOLIZATION_H_

#include <cstdint>
#include <span>
#include <string>

namespace memprof::report::aggregate {

// One source-level frame at a code address. An address inside inlined code
// has several: the inlined callees and, last, the function that contains it.
struct Frame {
  std::string function;  // demangled full name; empty when unknown
  std::string file;      // source file; empty when unknown
  int line = 0;          // 0 when unknown
  std::string module;    // the mapped object (binary or .so); empty when unknown
  uint64_t module_offset = 0;
  // `function` is --nearest-symbol's guess (the closest symbol below the
  // address, "name+0x2a?"), not a symbol that covers the address.
  bool guessed = false;
};

// Maps code addresses to frames. The aggregation calls it once per distinct
// address and copies what it gets, so an implementation need not cache.
//
// `address` is a lookup address, not a raw return address: like jeprof, the
// aggregation subtracts 1 from every caller's return address so that it
// points into the call instruction (and the right inline frames).
class AddressSymbolizer {
 public:
  virtual ~AddressSymbolizer() = default;

  // The frames at `address`, innermost inlined frame first and the function
  // containing the address last. Never empty: an address that cannot be
  // resolved gives one Frame with an empty `function` (module may be set),
  // which the reports show as UnnamedFrameName. The span stays
  // valid until the next call to Resolve on the same object.
  virtual std::span<const Frame> Resolve(uint64_t address) = 0;
};

// "0x" plus the address in lower-case hex without leading zeros.
std::string HexAddress(uint64_t address);

// How the reports name a frame no symbol covers: "module+0xOFFSET" (the
// offset within the module's file, as pprof prints it), which means the same
// code in every process and on every run; only an address outside every
// mapped file (JIT code, say) is named by its absolute address.
std::string UnnamedFrameName(const Frame& frame, uint64_t address);

// Whether the reports had to name `frame` without a symbol that covers it:
// no name at all, or --nearest-symbol's guess.
inline bool IsUnnamed(const Frame& frame) { return frame.function.empty() || frame.guessed; }

// Resolves nothing: every address becomes a frame named 0x<address>. The
// fallback when no symbols are available, and what tests compare against
// jeprof run without object tools.
class HexSymbolizer final : public AddressSymbolizer {
 public:
  std::span<const Frame> Resolve(uint64_t address) override;

 private:
  Frame frame_;
};

}  // namespace memprof::report::aggregate

#endif  // MEMPROF_CLI_REPORT_AGGREGATE_SYMBOLIZATION_H_
