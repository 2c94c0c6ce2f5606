#include "cli/report/symbolize/module_report.h"

#include <gelf.h>

#include <algorithm>
#include <map>

namespace memprof::symbolize {
namespace {

std::string BuildIdOf(Dwfl_Module* module) {
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int length = dwfl_module_build_id(module, &bits, &vaddr);
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (int i = 0; i < length; ++i) {
    hex += kDigits[bits[i] >> 4];
    hex += kDigits[bits[i] & 0xf];
  }
  return hex;
}

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
  report.build_id = BuildIdOf(module);
  Dwarf_Addr bias = 0;
  report.debug_info = dwfl_module_getdwarf(module, &bias) != nullptr;
  const char* main_file = nullptr;
  const char* debug_file = nullptr;
  dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, &main_file, &debug_file);
  if (debug_file != nullptr && (main_file == nullptr || std::string(debug_file) != main_file)) {
    report.debug_file = debug_file;
  }
  // libdwfl takes its symbol table from the debug file when it has one.
  Elf* main_elf = dwfl_module_getelf(module, &bias);
  report.full_symtab = HasSymtab(main_elf);
  if (!report.full_symtab && report.debug_info) {
    Dwarf* dwarf = dwfl_module_getdwarf(module, &bias);
    report.full_symtab = HasSymtab(dwarf != nullptr ? dwarf_getelf(dwarf) : nullptr);
  }
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

}  // namespace memprof::symbolize
