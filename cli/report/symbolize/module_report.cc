#include "cli/report/symbolize/module_report.h"

#include <gelf.h>

#include <algorithm>
#include <map>

#include "cli/report/symbolize/hex.h"

namespace memprof::report::symbolize {

std::string ModuleBuildId(Dwfl_Module* module) {
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int length = dwfl_module_build_id(module, &bits, &vaddr);
  return length > 0 ? LowerHex(bits, static_cast<size_t>(length)) : std::string();
}

namespace {

bool HasSymtab(Elf* elf) {
  for (Elf_Scn* scn = elf != nullptr ? elf_nextscn(elf, nullptr) : nullptr; scn != nullptr;
       scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) != nullptr && header.sh_type == SHT_SYMTAB) return true;
  }
  return false;
}

// How much a report knows: used to keep the best of several.
int Knowledge(const ModuleReport& report) {
  return (report.problem.empty() ? 4 : 0) + (report.debug_info ? 2 : 0) +
         (report.full_symtab ? 1 : 0);
}

}  // namespace

ModuleReport DescribeModule(Dwfl_Module* module, const std::string& path) {
  ModuleReport report;
  report.path = path;
  report.build_id = ModuleBuildId(module);
  Dwarf_Addr bias = 0;
  Dwarf* dwarf = dwfl_module_getdwarf(module, &bias);
  report.debug_info = dwarf != nullptr;
  const char* main_file = nullptr;
  const char* debug_file = nullptr;
  dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, &main_file, &debug_file);
  if (debug_file != nullptr && (main_file == nullptr || std::string(debug_file) != main_file)) {
    report.debug_file = debug_file;
  }
  // libdwfl takes its symbol table from the debug file when it has one.
  Elf* main_elf = dwfl_module_getelf(module, &bias);
  report.full_symtab = HasSymtab(main_elf);
  if (!report.full_symtab && dwarf != nullptr) report.full_symtab = HasSymtab(dwarf_getelf(dwarf));
  return report;
}

std::vector<ModuleReport> MergeModuleReports(std::vector<ModuleReport> reports) {
  std::map<std::string, ModuleReport> by_path;
  for (ModuleReport& report : reports) {
    auto [it, inserted] = by_path.try_emplace(report.path, report);
    if (!inserted && Knowledge(report) > Knowledge(it->second)) it->second = std::move(report);
  }
  std::vector<ModuleReport> merged;
  for (auto& [path, report] : by_path) merged.push_back(std::move(report));
  return merged;
}

}  // namespace memprof::report::symbolize
