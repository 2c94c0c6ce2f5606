#include <cinttypes>
#include <cstdio>

#include "cli/report/aggregate/symbolization.h"

namespace memprof::report::aggregate {

std::string HexAddress(uint64_t address) {
  char buffer[32];
  int length = std::snprintf(buffer, sizeof(buffer), "0x%" PRIx64, address);
  return std::string(buffer, static_cast<size_t>(length));
}

std::string UnnamedFrameName(const Frame& frame, uint64_t address) {
  if (frame.module.empty()) return HexAddress(address);
  return frame.module + "+" + HexAddress(frame.module_offset);
}

std::span<const Frame> HexSymbolizer::Resolve(uint64_t address) {
  frame_.function = HexAddress(address);
  return {&frame_, 1};
}

}  // namespace memprof::report::aggregate
