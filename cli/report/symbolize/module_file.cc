#include "cli/report/symbolize/module_file.h"

#include "cli/report/symbolize/elf_layout.h"
#include "common/mapped_file_open.h"

namespace memprof::report::symbolize {

Result<ModuleFile> OpenModuleFile(const MemoryMapping& mapping, const SymbolizerOptions& options) {
  MappedFileSource source;
  source.pid = options.pid;
  source.root = options.sysroot;
  Result<OpenedMappedFile> opened =
      OpenMappedFile({mapping.path, mapping.start, mapping.end, mapping.deleted}, source);
  if (!opened) return Fail(opened.error());
  ModuleFile file{std::move(opened->fd), options.sysroot + mapping.path, ""};
  file.opened_as = DescribeOpenedMappedFile(*opened);
  return file;
}

Result<std::string> MappedBuildId(const MemoryMapping& mapping, const SymbolizerOptions& options) {
  Result<ModuleFile> file = OpenModuleFile(mapping, options);
  if (!file) return Fail(file.error());
  return BuildIdOf(file->fd.get(), file->file_name);
}

}  // namespace memprof::report::symbolize
