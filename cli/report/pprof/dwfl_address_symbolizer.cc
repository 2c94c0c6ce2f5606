#include "cli/report/pprof/dwfl_address_symbolizer.h"

#include <string>

#include "cli/report/symbolize/hex.h"

namespace memprof::report::pprof {
namespace {

// True if `frame` carries the Symbolizer's stand-in name for `address`
// rather than a real one (see PlaceholderName in cli/report/symbolize/symbolizer.cc).
bool IsPlaceholder(const symbolize::Frame& frame, uint64_t address) {
  if (!frame.file.empty() || frame.line != 0) return false;
  if (frame.module.empty()) return frame.function == "0x" + symbolize::LowerHex(address);
  return frame.function == frame.module + "+0x" + symbolize::LowerHex(frame.module_offset);
}

}  // namespace

DwflAddressSymbolizer::DwflAddressSymbolizer(symbolize::Symbolizer& symbolizer)
    : symbolizer_(symbolizer) {}

std::span<const aggregate::Frame> DwflAddressSymbolizer::Resolve(uint64_t address) {
  std::span<const symbolize::Frame> frames = symbolizer_.ResolvePc(address);
  frames_.clear();
  for (const symbolize::Frame& frame : frames) {
    aggregate::Frame& copy = frames_.emplace_back();
    if (!IsPlaceholder(frame, address)) copy.function = frame.function;
    copy.file = frame.file;
    copy.line = frame.line;
    copy.module = frame.module;
    copy.module_offset = frame.module_offset;
    copy.guessed = frame.guessed;
  }
  if (frames_.empty()) frames_.emplace_back();  // the interface promises one frame
  return frames_;
}

}  // namespace memprof::report::pprof
