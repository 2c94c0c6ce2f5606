#include "common/mapped_file_open.h"

#include <fcntl.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace memprof {
namespace {

std::string Hex(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%" PRIx64, value);
  return buffer;
}

Fd OpenReadOnly(const std::string& path) { return Fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)); }

}  // namespace

std::string MapFilesPath(std::string_view proc_root, pid_t pid, uint64_t start, uint64_t end) {
  return std::string(proc_root) + "/" + std::to_string(pid) + "/map_files/" + Hex(start) + "-" +
         Hex(end);
}

Result<OpenedMappedFile> OpenMappedFile(const MappedFileRef& file, const MappedFileSource& source) {
  OpenedMappedFile opened;
  std::string map_files_failure;
  if (source.pid && file.end > file.start) {
    opened.opened_path = MapFilesPath(source.proc_root, *source.pid, file.start, file.end);
    opened.fd = OpenReadOnly(opened.opened_path);
    if (opened.fd) {
      opened.through_map_files = true;
      return opened;
    }
    map_files_failure = " (nor through " + opened.opened_path + ": " + std::strerror(errno) + ")";
  }
  if (file.deleted) {
    return Fail(ErrorCode::kNotFound, file.path + " was deleted" +
                                          (map_files_failure.empty()
                                               ? std::string(" and cannot be read by name")
                                               : " and is not reachable" + map_files_failure));
  }
  opened.opened_path = source.root + file.path;
  opened.fd = OpenReadOnly(opened.opened_path);
  if (opened.fd) return opened;
  const int err = errno;
  return Fail(err == EACCES ? ErrorCode::kPermissionDenied : ErrorCode::kNotFound,
              "cannot read " + opened.opened_path + ": " + std::strerror(err) + map_files_failure);
}

std::string DescribeOpenedMappedFile(const OpenedMappedFile& opened) {
  return (opened.through_map_files ? "through " : "by name, ") + opened.opened_path;
}

}  // namespace memprof
