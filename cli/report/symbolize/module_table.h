#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_MODULE_TABLE_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_MODULE_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cli/report/symbolize/memory_map.h"

namespace memprof::report::symbolize {

// One loaded instance of a file: the consecutive mappings of one path (same
// inode) with increasing offsets. A library mapped twice is two instances,
// each with its own load bias.
struct ModuleInstance {
  size_t first_mapping = 0;  // index into ModuleTable::mappings()
  size_t bias_mapping = 0;   // the mapping the load bias is computed from: the first
                             // executable one (return addresses live there), else the first
};

// The mappings of a process sorted by address, grouped into module
// instances, with address lookup. Pure data: opens no files.
class ModuleTable {
 public:
  explicit ModuleTable(std::vector<MemoryMapping> mappings);

  // The mapping that covers `address`, or nullptr.
  const MemoryMapping* FindMapping(uint64_t address) const;
  // Index into instances() of the module that `mapping` belongs to; nullopt
  // for anonymous and pseudo ([vdso], [stack]) mappings.
  std::optional<size_t> InstanceOf(const MemoryMapping& mapping) const;

  const std::vector<MemoryMapping>& mappings() const { return mappings_; }
  const std::vector<ModuleInstance>& instances() const { return instances_; }

 private:
  void Group();

  std::vector<MemoryMapping> mappings_;             // sorted by start, non-overlapping assumed
  std::vector<std::optional<size_t>> instance_of_;  // parallel to mappings_
  std::vector<ModuleInstance> instances_;
};

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_MODULE_TABLE_H_
