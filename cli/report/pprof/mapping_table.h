#ifndef MEMPROF_CLI_REPORT_PPROF_MAPPING_TABLE_H_
#define MEMPROF_CLI_REPORT_PPROF_MAPPING_TABLE_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "cli/report/pprof/string_table.h"
#include "cli/report/symbolize/memory_map.h"
#include "pprof_proto/profile.pb.h"

namespace memprof::report::pprof {

// What symbolizing one location found; ORed into its mapping's has_* flags.
struct Resolution {
  bool functions = false;
  bool filenames = false;
  bool line_numbers = false;
  bool inline_frames = false;
};

// Profile.mapping: one entry per executable mapping of the process, which is
// where every code address of a stack lies. Non-executable mappings (data,
// heap, the other segments of each file) would only make pprof's list long.
class MappingTable {
 public:
  // The build ID (hex) of a file-backed mapping, "" when unknown.
  using BuildIdReader = std::function<std::string(const symbolize::MemoryMapping&)>;

  // Adds the executable entries of `mappings` to `profile`, ids 1.. in input
  // order (pprof itself moves what looks like the main binary to the front).
  MappingTable(perftools::profiles::Profile& profile, StringTable& strings,
               std::span<const symbolize::MemoryMapping> mappings, const BuildIdReader& build_id);

  // The id of the mapping holding `address`; 0 (no mapping) if none does.
  uint64_t IdFor(uint64_t address) const;

  // Records what symbolization found at an address of mapping `id` (not 0).
  // pprof reads any has_* flag as "already symbolized" and will not
  // symbolize the mapping again unless told to (-symbolize=force). So the
  // flags are set only while every address of the mapping had a name: one
  // unnamed address (a stripped binary named only by its exported symbols)
  // clears them for good, and pprof with PPROF_BINARY_PATH or a symbol
  // server can still name the rest on another machine.
  void Note(uint64_t id, const Resolution& resolution);

 private:
  struct Range {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t id = 0;
  };

  perftools::profiles::Profile& profile_;
  std::vector<Range> ranges_;     // sorted by start; /proc maps never overlap
  std::vector<bool> incomplete_;  // by id - 1: some address had no name
};

}  // namespace memprof::report::pprof

#endif  // MEMPROF_CLI_REPORT_PPROF_MAPPING_TABLE_H_
