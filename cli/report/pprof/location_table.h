#ifndef MEMPROF_CLI_REPORT_PPROF_LOCATION_TABLE_H_
#define MEMPROF_CLI_REPORT_PPROF_LOCATION_TABLE_H_

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "cli/report/aggregate/symbolization.h"
#include "cli/report/pprof/mapping_table.h"
#include "cli/report/pprof/string_table.h"
#include "pprof_proto/profile.pb.h"

namespace memprof::report::pprof {

// Profile.location and Profile.function: one Location per distinct lookup
// address, symbolized once, and one Function per distinct (name,
// system_name, filename).
class LocationTable {
 public:
  LocationTable(perftools::profiles::Profile& profile, StringTable& strings, MappingTable& mappings,
                aggregate::AddressSymbolizer& symbolizer);

  // The Location id of lookup address `address`, creating it on first use.
  uint64_t IdFor(uint64_t address);

 private:
  struct FunctionKey {
    int64_t name = 0;
    int64_t system_name = 0;
    int64_t filename = 0;
    bool operator==(const FunctionKey&) const = default;
  };
  struct FunctionKeyHash {
    size_t operator()(const FunctionKey& key) const;
  };

  uint64_t Add(uint64_t address);
  Resolution AddLines(perftools::profiles::Location& location,
                      std::span<const aggregate::Frame> frames);
  uint64_t FunctionId(const aggregate::Frame& frame);

  perftools::profiles::Profile& profile_;
  StringTable& strings_;
  MappingTable& mappings_;
  aggregate::AddressSymbolizer& symbolizer_;
  absl::flat_hash_map<uint64_t, uint64_t> locations_;  // address -> id, one lookup per frame
  std::unordered_map<FunctionKey, uint64_t, FunctionKeyHash> functions_;
};

}  // namespace memprof::report::pprof

#endif  // MEMPROF_CLI_REPORT_PPROF_LOCATION_TABLE_H_
