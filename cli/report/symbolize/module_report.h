#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_MODULE_REPORT_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_MODULE_REPORT_H_

#include <elfutils/libdwfl.h>

#include <string>
#include <vector>

namespace memprof::report::symbolize {

// What the symbolizer had for one mapped file: the facts a user needs to
// see why its frames have no names, and to fix it.
struct ModuleReport {
  std::string path;       // as the dump's map names it
  std::string build_id;   // lower-case hex; "" when the file has none (or was not read)
  std::string problem;    // why the file could not be used at all ("" = it was)
  bool full_symtab = false;  // a .symtab (in the file or its debug file), not only .dynsym
  bool debug_info = false;   // DWARF was found: inline frames, file:line
  std::string debug_file;    // where that DWARF came from, when not the file itself
  // How the file was opened: "through /proc/N/map_files/..." or "by name,
  // <root><path>" ("" = it could not be); memprofctl says which with -v.
  std::string opened_as;
};

// The facts of a module libdwfl has loaded from `path`. Asks libdwfl for
// its DWARF, which may look for a separate debug file (and, with
// DEBUGINFOD_URLS set, download one).
ModuleReport DescribeModule(Dwfl_Module* module, const std::string& path);

// The build ID of the module's main file in lowercase hex; "" when it has none.
std::string ModuleBuildId(Dwfl_Module* module);

// The reports of several symbolizers (one per worker thread) as one list:
// one entry per path, the one that learned most about it.
std::vector<ModuleReport> MergeModuleReports(std::vector<ModuleReport> reports);

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_MODULE_REPORT_H_
