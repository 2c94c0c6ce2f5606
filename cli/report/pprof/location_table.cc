#include "cli/report/pprof/location_table.h"

#include "cli/report/aggregate/jeprof_names.h"

namespace memprof::report::pprof {

size_t LocationTable::FunctionKeyHash::operator()(const FunctionKey& key) const {
  // String indexes are small and dense; mixing them with odd multipliers is
  // enough to spread them.
  uint64_t hash = static_cast<uint64_t>(key.name) * 0x9E3779B97F4A7C15ULL;
  hash ^= static_cast<uint64_t>(key.system_name) * 0xC2B2AE3D27D4EB4FULL;
  hash ^= static_cast<uint64_t>(key.filename) * 0x165667B19E3779F9ULL;
  return static_cast<size_t>(hash ^ (hash >> 29));
}

LocationTable::LocationTable(perftools::profiles::Profile& profile, StringTable& strings,
                             MappingTable& mappings, aggregate::AddressSymbolizer& symbolizer)
    : profile_(profile), strings_(strings), mappings_(mappings), symbolizer_(symbolizer) {}

uint64_t LocationTable::IdFor(uint64_t address) {
  if (auto it = locations_.find(address); it != locations_.end()) return it->second;
  uint64_t id = Add(address);
  locations_.emplace(address, id);
  return id;
}

uint64_t LocationTable::Add(uint64_t address) {
  perftools::profiles::Location* location = profile_.add_location();
  location->set_id(static_cast<uint64_t>(profile_.location_size()));
  location->set_address(address);
  uint64_t mapping_id = mappings_.IdFor(address);
  location->set_mapping_id(mapping_id);
  Resolution resolution = AddLines(*location, symbolizer_.Resolve(address));
  if (mapping_id != 0) mappings_.Note(mapping_id, resolution);
  return location->id();
}

namespace {

// A frame no symbol names inside a (stripped) allocator library is named
// "[libjemalloc.so.2]", which kAllocatorDropFrames matches: pprof then cuts
// the allocator's own frames as it cuts named ones.
// A --nearest-symbol guess is left out like any unnamed frame: a name
// would tell pprof the location is symbolized (has_functions), and it would
// never look for the real one (PPROF_BINARY_PATH, a symbol server).
aggregate::Frame NameAllocatorFrame(const aggregate::Frame& frame) {
  aggregate::Frame named = frame;
  if (named.guessed) named.function.clear();
  if (!named.function.empty() || !aggregate::IsAllocatorModule(named.module)) return named;
  named.function = "[" + frame.module + "]";
  return named;
}

}  // namespace

// One Line per frame the symbolizer named, in its order (innermost inlined
// first, which is profile.proto's "line[i] is inlined into line[i+1]").
// Unnamed frames are left out: a Line needs a Function, and a nameless one
// would show as an empty name where pprof otherwise shows the address.
Resolution LocationTable::AddLines(perftools::profiles::Location& location,
                                   std::span<const aggregate::Frame> frames) {
  Resolution resolution;
  for (const aggregate::Frame& frame : frames) {
    const aggregate::Frame named = NameAllocatorFrame(frame);
    if (named.function.empty()) continue;
    perftools::profiles::Line* line = location.add_line();
    line->set_function_id(FunctionId(named));
    line->set_line(frame.line);
    resolution.functions = true;
    resolution.filenames |= !frame.file.empty();
    resolution.line_numbers |= frame.line != 0;
  }
  resolution.inline_frames = location.line_size() > 1;
  return resolution;
}

// The symbolizer gives demangled names only, so system_name repeats the
// name, as pprof's own symbolizer does when it has nothing better.
uint64_t LocationTable::FunctionId(const aggregate::Frame& frame) {
  int64_t name = strings_.Intern(frame.function);
  FunctionKey key{name, name, strings_.Intern(frame.file)};
  auto [it, inserted] = functions_.try_emplace(key, 0);
  if (!inserted) return it->second;
  perftools::profiles::Function* function = profile_.add_function();
  function->set_id(static_cast<uint64_t>(profile_.function_size()));
  function->set_name(key.name);
  function->set_system_name(key.system_name);
  function->set_filename(key.filename);
  it->second = function->id();
  return it->second;
}

}  // namespace memprof::report::pprof
