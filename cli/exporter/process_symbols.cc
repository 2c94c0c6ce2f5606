#include "cli/exporter/process_symbols.h"

#include <string_view>

#include "cli/report/pprof/dwfl_address_symbolizer.h"
#include "cli/report/report_symbolizer.h"
#include "cli/report/symbolize/symbolizer.h"
#include "common/text_file.h"

namespace memprof::cli {
namespace {

// The innermost frame that has a name, or "".
std::string InnermostName(std::span<const report::aggregate::Frame> frames) {
  for (const report::aggregate::Frame& frame : frames) {
    if (!frame.function.empty() && !frame.guessed) return frame.function;
  }
  return "";
}

// The lines of a /proc/<pid>/maps text, without their newlines.
std::vector<std::string> SplitMapsLines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    if (!line.empty()) lines.emplace_back(line);
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return lines;
}

}  // namespace

Result<std::vector<std::string>> NameProcessAddresses(pid_t pid,
                                                      std::span<const uint64_t> addresses) {
  auto maps = ReadTextFile("/proc/" + std::to_string(pid) + "/maps");
  if (!maps) return Fail(maps.error());
  report::ReportRequest live;
  live.pid = pid;
  auto symbolizer = report::symbolize::Symbolizer::FromMapsLines(SplitMapsLines(*maps),
                                                         report::SymbolizerOptionsFor(live));
  if (!symbolizer) return Fail(symbolizer.error());
  report::pprof::DwflAddressSymbolizer named(*symbolizer);
  std::vector<std::string> names;
  names.reserve(addresses.size());
  for (const uint64_t address : addresses) names.push_back(InnermostName(named.Resolve(address)));
  return names;
}

}  // namespace memprof::cli
