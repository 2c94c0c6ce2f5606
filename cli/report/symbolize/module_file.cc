#include "cli/report/symbolize/module_file.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "cli/report/symbolize/hex.h"

namespace memprof::symbolize {
namespace {

Fd OpenReadOnly(const std::string& path) { return Fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)); }

}  // namespace

std::string MapFilesPath(pid_t pid, const MemoryMapping& mapping) {
  return "/proc/" + std::to_string(pid) + "/map_files/" + LowerHex(mapping.start) + "-" +
         LowerHex(mapping.end);
}

Result<ModuleFile> OpenModuleFile(const MemoryMapping& mapping, const SymbolizerOptions& options) {
  ModuleFile file{Fd(), options.sysroot + mapping.path};
  if (options.pid) {
    file.fd = OpenReadOnly(MapFilesPath(*options.pid, mapping));
    if (file.fd.valid()) return file;
  }
  if (mapping.deleted) {
    return Fail(ErrorCode::kNotFound,
                mapping.path + " was deleted and is not reachable through /proc/<pid>/map_files");
  }
  file.fd = OpenReadOnly(file.file_name);
  if (file.fd.valid()) return file;
  const int err = errno;
  return Fail(err == EACCES ? ErrorCode::kPermissionDenied : ErrorCode::kNotFound,
              "cannot open " + file.file_name + ": " + std::strerror(err));
}

}  // namespace memprof::symbolize
