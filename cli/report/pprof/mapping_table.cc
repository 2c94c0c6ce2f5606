#include "cli/report/pprof/mapping_table.h"

#include <algorithm>

namespace memprof::report::pprof {

MappingTable::MappingTable(perftools::profiles::Profile& profile, StringTable& strings,
                           std::span<const symbolize::MemoryMapping> mappings,
                           const BuildIdReader& build_id)
    : profile_(profile) {
  for (const symbolize::MemoryMapping& mapping : mappings) {
    if (!mapping.Executable()) continue;
    perftools::profiles::Mapping* entry = profile_.add_mapping();
    entry->set_id(static_cast<uint64_t>(profile_.mapping_size()));
    entry->set_memory_start(mapping.start);
    entry->set_memory_limit(mapping.end);
    entry->set_file_offset(mapping.offset);
    entry->set_filename(strings.Intern(mapping.path));
    if (mapping.FileBacked()) entry->set_build_id(strings.Intern(build_id(mapping)));
    ranges_.push_back({mapping.start, mapping.end, entry->id()});
  }
  incomplete_.assign(ranges_.size(), false);
  std::sort(ranges_.begin(), ranges_.end(),
            [](const Range& a, const Range& b) { return a.start < b.start; });
}

uint64_t MappingTable::IdFor(uint64_t address) const {
  // The last range starting at or below the address is the only candidate.
  auto after =
      std::upper_bound(ranges_.begin(), ranges_.end(), address,
                       [](uint64_t value, const Range& range) { return value < range.start; });
  if (after == ranges_.begin()) return 0;
  const Range& range = *(after - 1);
  return address < range.end ? range.id : 0;
}

void MappingTable::Note(uint64_t id, const Resolution& resolution) {
  perftools::profiles::Mapping& entry = profile_.mutable_mapping()->at(static_cast<int>(id - 1));
  if (incomplete_[id - 1]) return;
  if (!resolution.functions) {
    incomplete_[id - 1] = true;
    entry.clear_has_functions();
    entry.clear_has_filenames();
    entry.clear_has_line_numbers();
    entry.clear_has_inline_frames();
    return;
  }
  entry.set_has_functions(true);
  if (resolution.filenames) entry.set_has_filenames(true);
  if (resolution.line_numbers) entry.set_has_line_numbers(true);
  if (resolution.inline_frames) entry.set_has_inline_frames(true);
}

}  // namespace memprof::report::pprof
