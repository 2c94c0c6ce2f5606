#include "cli/report/symbolize/module_table.h"

#include <algorithm>
#include <utility>

namespace memprof::report::symbolize {
namespace {

// A file-backed mapping continues the previous file mapping's instance when
// it maps the same file further on. Anonymous mappings in between (.bss) do
// not interrupt an instance; an offset that goes back starts a new one.
bool SameFileFurtherOn(const MemoryMapping& previous, const MemoryMapping& mapping) {
  return previous.path == mapping.path && previous.inode == mapping.inode &&
         previous.deleted == mapping.deleted && mapping.offset > previous.offset;
}

}  // namespace

ModuleTable::ModuleTable(std::vector<MemoryMapping> mappings) : mappings_(std::move(mappings)) {
  std::stable_sort(
      mappings_.begin(), mappings_.end(),
      [](const MemoryMapping& a, const MemoryMapping& b) { return a.start < b.start; });
  Group();
}

void ModuleTable::Group() {
  instance_of_.assign(mappings_.size(), std::nullopt);
  std::optional<size_t> last_file_mapping;
  for (size_t i = 0; i < mappings_.size(); ++i) {
    const MemoryMapping& mapping = mappings_[i];
    if (!mapping.FileBacked()) continue;
    const bool continues =
        last_file_mapping && SameFileFurtherOn(mappings_[*last_file_mapping], mapping);
    if (!continues) instances_.push_back({i, i});
    ModuleInstance& instance = instances_.back();
    instance_of_[i] = instances_.size() - 1;
    if (mapping.Executable() && !mappings_[instance.bias_mapping].Executable()) {
      instance.bias_mapping = i;
    }
    last_file_mapping = i;
  }
}

const MemoryMapping* ModuleTable::FindMapping(uint64_t address) const {
  auto after = std::upper_bound(mappings_.begin(), mappings_.end(), address,
                                [](uint64_t a, const MemoryMapping& m) { return a < m.start; });
  if (after == mappings_.begin()) return nullptr;
  const MemoryMapping& candidate = *std::prev(after);
  return candidate.Contains(address) ? &candidate : nullptr;
}

std::optional<size_t> ModuleTable::InstanceOf(const MemoryMapping& mapping) const {
  const size_t index = static_cast<size_t>(&mapping - mappings_.data());
  if (index >= instance_of_.size()) return std::nullopt;
  return instance_of_[index];
}

}  // namespace memprof::report::symbolize
