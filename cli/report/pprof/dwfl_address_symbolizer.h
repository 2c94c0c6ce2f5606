#ifndef MEMPROF_CLI_REPORT_PPROF_DWFL_ADDRESS_SYMBOLIZER_H_
#define MEMPROF_CLI_REPORT_PPROF_DWFL_ADDRESS_SYMBOLIZER_H_

#include <cstdint>
#include <span>
#include <vector>

#include "cli/report/aggregate/symbolization.h"
#include "cli/report/symbolize/symbolizer.h"

namespace memprof::report::pprof {

// The libdwfl Symbolizer behind the aggregate stage's AddressSymbolizer
// interface. Kept in one small file so it can move next to its other users
// (the report command) unchanged.
//
// The aggregation hands out lookup addresses (callers already minus one,
// see report::LookupAddress), so this calls Symbolizer::ResolvePc, which
// looks an address up as given; Symbolizer::Resolve would subtract 1 again.
// The Symbolizer names what it cannot resolve "module+0xoffset" or
// "0x<address>"; the interface wants an empty function there (each report
// picks its own spelling, and pprof then shows the address), so exactly
// those placeholder names are cleared.
class DwflAddressSymbolizer final : public aggregate::AddressSymbolizer {
 public:
  // `symbolizer` must outlive this object.
  explicit DwflAddressSymbolizer(symbolize::Symbolizer& symbolizer);

  std::span<const aggregate::Frame> Resolve(uint64_t address) override;

 private:
  symbolize::Symbolizer& symbolizer_;
  std::vector<aggregate::Frame> frames_;  // the last result; reused
};

}  // namespace memprof::report::pprof

#endif  // MEMPROF_CLI_REPORT_PPROF_DWFL_ADDRESS_SYMBOLIZER_H_
