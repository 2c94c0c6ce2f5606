#include "cli/report/symbolize/symbolizer.h"

#include <unordered_map>
#include <utility>

#include "cli/report/symbolize/demangle.h"
#include "cli/report/symbolize/dwfl_session.h"
#include "cli/report/symbolize/elf_layout.h"
#include "cli/report/symbolize/hex.h"
#include "cli/report/symbolize/inline_frames.h"
#include "cli/report/symbolize/module_file.h"
#include "cli/report/symbolize/module_table.h"
#include "cli/report/symbolize/symbol_index.h"

namespace memprof::report::symbolize {
namespace {

using FrameCache = std::unordered_map<uint64_t, std::vector<Frame>>;

std::vector<std::string> DebugRoots(const SymbolizerOptions& options) {
  std::vector<std::string> roots = options.debug_dirs;
  if (!options.sysroot.empty()) {
    for (const std::string& dir : options.debug_dirs) roots.push_back(options.sysroot + dir);
  }
  return roots;
}

// The name of a frame nothing better is known for.
std::string PlaceholderName(const Frame& frame, uint64_t address) {
  if (frame.module.empty()) return "0x" + LowerHex(address);
  return frame.module + "+0x" + LowerHex(frame.module_offset);
}

}  // namespace

struct Symbolizer::Impl {
  // A module instance's libdwfl state, loaded on first use.
  struct ModuleSlot {
    bool tried = false;
    bool needed = false;            // an address was resolved in it (not only Prepare)
    Dwfl_Module* module = nullptr;  // null if the file could not be used
    std::string problem;            // why, then
    std::string opened_as;          // how its file was opened (ModuleFile::opened_as)
  };

  Impl(SymbolizerOptions o, ModuleTable t, std::unique_ptr<DwflSession> s)
      : options(std::move(o)), table(std::move(t)), session(std::move(s)) {}

  SymbolizerOptions options;
  ModuleTable table;
  std::unique_ptr<DwflSession> session;
  InlineFrameResolver inline_frames;  // after session: reads its DWARF, dies first
  std::vector<ModuleSlot> slots;      // parallel to table.instances()
  FrameCache return_cache;
  FrameCache pc_cache;
  std::unordered_map<Dwfl_Module*, SymbolIndex> symbol_indexes;  // built on first use
  // Demangled symbol names: the addresses of one function share one. The
  // keys point into the modules' string tables, which live as long as the session.
  std::unordered_map<std::string_view, std::string> demangled;
  std::vector<std::string> problems;
  size_t skipped_map_lines = 0;

  std::span<const Frame> Cached(FrameCache& cache, uint64_t address, uint64_t lookup);
  std::vector<Frame> Symbolize(uint64_t address, uint64_t lookup);
  std::vector<Frame> ModuleFrames(Dwfl_Module* module, const Frame& base, uint64_t lookup);
  std::string SymbolName(Dwfl_Module* module, uint64_t address);
  void GuessName(Dwfl_Module* module, uint64_t lookup, Frame& frame);
  SymbolIndex& IndexOf(Dwfl_Module* module);
  Dwfl_Module* ModuleFor(const MemoryMapping& mapping, bool needed = true);
  void Prepare(uint64_t pc);
  Result<Dwfl_Module*> Load(const ModuleInstance& instance, std::string& opened_as);
};

std::span<const Frame> Symbolizer::Impl::Cached(FrameCache& cache, uint64_t address,
                                                uint64_t lookup) {
  // unordered_map nodes never move, so the span stays valid.
  auto [it, inserted] = cache.try_emplace(address);
  if (inserted) it->second = Symbolize(address, lookup);
  return it->second;
}

std::vector<Frame> Symbolizer::Impl::Symbolize(uint64_t address, uint64_t lookup) {
  Frame base;
  const MemoryMapping* mapping = table.FindMapping(lookup);
  if (mapping != nullptr) {
    base.module = mapping->Basename();
    base.module_offset = address - mapping->start + mapping->offset;
  }
  Dwfl_Module* module = mapping != nullptr ? ModuleFor(*mapping) : nullptr;
  std::vector<Frame> frames;
  if (module != nullptr) frames = ModuleFrames(module, base, lookup);
  if (frames.empty()) frames.push_back(base);
  for (Frame& frame : frames) {
    if (frame.function.empty()) frame.function = PlaceholderName(frame, address);
  }
  return frames;
}

// DWARF frames when there is DWARF for `lookup`, else the symbol table's
// name; module fields come from `base`.
std::vector<Frame> Symbolizer::Impl::ModuleFrames(Dwfl_Module* module, const Frame& base,
                                                  uint64_t lookup) {
  std::vector<Frame> frames;
  for (SourceFrame& source : inline_frames.Frames(module, lookup, options.lines)) {
    Frame& frame = frames.emplace_back(base);
    frame.function = std::move(source.function);
    frame.file = std::move(source.file);
    frame.line = source.line;
  }
  if (frames.empty()) frames.push_back(base);
  Frame& outer = frames.back();
  if (outer.function.empty()) outer.function = SymbolName(module, lookup);
  if (outer.function.empty() && options.nearest_symbol) GuessName(module, lookup, outer);
  return frames;
}

SymbolIndex& Symbolizer::Impl::IndexOf(Dwfl_Module* module) {
  auto it = symbol_indexes.find(module);
  if (it == symbol_indexes.end()) {
    it = symbol_indexes.emplace(module, SymbolIndex::Build(module)).first;
  }
  return it->second;
}

// The ELF symbol table's name for `address` (stripped binaries keep .dynsym).
std::string Symbolizer::Impl::SymbolName(Dwfl_Module* module, uint64_t address) {
  const std::optional<std::string_view> name = IndexOf(module).Find(address);
  if (!name) return std::string();
  auto [it, inserted] = demangled.try_emplace(*name);
  if (inserted) it->second = Demangle(std::string(*name).c_str());
  return it->second;
}

// --nearest-symbol: "name+0xdelta?", the '?' saying it may be another
// (static) function that follows `name`.
void Symbolizer::Impl::GuessName(Dwfl_Module* module, uint64_t lookup, Frame& frame) {
  const std::optional<SymbolIndex::Nearest> nearest = IndexOf(module).FindNearest(lookup);
  if (!nearest) return;
  frame.function = Demangle(std::string(nearest->name).c_str()) + "+0x" +
                   LowerHex(lookup - nearest->start) + "?";
  frame.guessed = true;
}

Dwfl_Module* Symbolizer::Impl::ModuleFor(const MemoryMapping& mapping, bool needed) {
  const std::optional<size_t> index = table.InstanceOf(mapping);
  if (!index) return nullptr;
  ModuleSlot& slot = slots[*index];
  if (!slot.tried) {
    slot.tried = true;
    Result<Dwfl_Module*> loaded = Load(table.instances()[*index], slot.opened_as);
    if (loaded) {
      slot.module = *loaded;
    } else {
      slot.problem = loaded.error().message;
    }
  }
  if (needed && !slot.needed) {
    slot.needed = true;
    if (slot.module == nullptr) problems.push_back(slot.problem);
  }
  return slot.module;
}

void Symbolizer::Impl::Prepare(uint64_t pc) {
  const MemoryMapping* mapping = table.FindMapping(pc);
  Dwfl_Module* module = mapping != nullptr ? ModuleFor(*mapping, /*needed=*/false) : nullptr;
  if (module == nullptr) return;
  IndexOf(module);
  Dwarf_Addr bias = 0;
  dwfl_module_addrdie(module, pc, &bias);  // loads the DWARF and its address ranges
}

Result<Dwfl_Module*> Symbolizer::Impl::Load(const ModuleInstance& instance,
                                            std::string& opened_as) {
  const MemoryMapping& mapping = table.mappings()[instance.bias_mapping];
  Result<ModuleFile> file = OpenModuleFile(mapping, options);
  if (!file) return Fail(file.error());
  opened_as = file->opened_as;
  Result<std::vector<LoadSegment>> segments = ReadLoadSegments(file->fd.get());
  if (!segments)
    return Fail(segments.error().code, file->file_name + ": " + segments.error().message);
  const std::optional<uint64_t> bias = LoadBias(*segments, mapping);
  if (!bias) {
    return Fail(ErrorCode::kFailedPrecondition,
                file->file_name + " has no loadable segment at file offset 0x" +
                    LowerHex(mapping.offset) + ": not the file that was mapped");
  }
  return session->Report(mapping.path, file->file_name, file->fd, *bias);
}

Symbolizer::Symbolizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Symbolizer::Symbolizer(Symbolizer&&) noexcept = default;
Symbolizer& Symbolizer::operator=(Symbolizer&&) noexcept = default;
Symbolizer::~Symbolizer() = default;

Result<Symbolizer> Symbolizer::Create(std::vector<MemoryMapping> mappings,
                                      SymbolizerOptions options) {
  Result<std::unique_ptr<DwflSession>> session = DwflSession::Create(DebugRoots(options));
  if (!session) return Fail(session.error());
  auto impl = std::make_unique<Impl>(std::move(options), ModuleTable(std::move(mappings)),
                                     std::move(*session));
  impl->slots.resize(impl->table.instances().size());
  return Symbolizer(std::move(impl));
}

Result<Symbolizer> Symbolizer::FromMapsLines(std::span<const std::string> lines,
                                             SymbolizerOptions options) {
  ParsedMemoryMap parsed = ParseMemoryMap(lines);
  Result<Symbolizer> symbolizer = Create(std::move(parsed.mappings), std::move(options));
  if (symbolizer) symbolizer->impl_->skipped_map_lines = parsed.skipped;
  return symbolizer;
}

std::span<const Frame> Symbolizer::Resolve(uint64_t address) {
  return impl_->Cached(impl_->return_cache, address, address == 0 ? 0 : address - 1);
}

std::span<const Frame> Symbolizer::ResolvePc(uint64_t pc) {
  return impl_->Cached(impl_->pc_cache, pc, pc);
}

void Symbolizer::Prepare(uint64_t pc) { impl_->Prepare(pc); }

size_t Symbolizer::skipped_map_lines() const { return impl_->skipped_map_lines; }

std::vector<std::string> Symbolizer::Problems() const { return impl_->problems; }

std::vector<ModuleReport> Symbolizer::Modules() const {
  std::vector<ModuleReport> reports;
  const std::vector<ModuleInstance>& instances = impl_->table.instances();
  for (size_t i = 0; i < impl_->slots.size(); ++i) {
    const auto& slot = impl_->slots[i];
    if (!slot.needed) continue;
    const std::string& path = impl_->table.mappings()[instances[i].bias_mapping].path;
    if (slot.module != nullptr) {
      reports.push_back(DescribeModule(slot.module, path));
    } else {
      ModuleReport& report = reports.emplace_back();
      report.path = path;
      report.problem = slot.problem;
    }
    reports.back().opened_as = slot.opened_as;
  }
  return reports;
}

}  // namespace memprof::report::symbolize
