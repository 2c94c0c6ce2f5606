#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_MODULE_FILE_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_MODULE_FILE_H_

#include <string>

#include "cli/report/symbolize/memory_map.h"
#include "cli/report/symbolize/symbolizer_options.h"
#include "common/fd.h"
#include "common/result.h"

namespace memprof::report::symbolize {

// A binary opened for symbolization.
struct ModuleFile {
  Fd fd;
  // Where the file lives in the file system (sysroot + path). Even when `fd`
  // came from map_files, libdwfl is given this name because debuglink files
  // are searched relative to the binary's directory.
  std::string file_name;
  // How it was opened, for -v: "through /proc/N/map_files/..." or
  // "by name, <sysroot><path>" (common/mapped_file_open.h).
  std::string opened_as;
};

// Opens the file that `mapping` maps as common's OpenMappedFile does:
// /proc/<pid>/map_files/<start>-<end> first for a live target (the mapped
// file itself, whatever its name resolves to from here), then
// <sysroot><path>. A deleted file is only opened through map_files:
// whatever sits at its old path now is another file.
[[nodiscard]] Result<ModuleFile> OpenModuleFile(const MemoryMapping& mapping,
                                                const SymbolizerOptions& options);

// The GNU build ID of the file `mapping` maps, read from the file opened as
// OpenModuleFile opens it.
[[nodiscard]] Result<std::string> MappedBuildId(const MemoryMapping& mapping,
                                                const SymbolizerOptions& options);

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_MODULE_FILE_H_
