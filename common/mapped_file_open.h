#ifndef MEMPROF_COMMON_MAPPED_FILE_OPEN_H_
#define MEMPROF_COMMON_MAPPED_FILE_OPEN_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/fd.h"
#include "common/result.h"

namespace memprof {

// One file that a process maps, as /proc/<pid>/maps names it.
struct MappedFileRef {
  std::string path;     // the name the kernel printed for it
  uint64_t start = 0;   // one of its mappings: [start, end)
  uint64_t end = 0;
  bool deleted = false;  // maps said "(deleted)": whatever has its name now is another file
};

// Where to open a mapped file from.
struct MappedFileSource {
  std::string proc_root = "/proc";
  // The live process that maps it; nullopt for a dump from elsewhere,
  // whose files are only reachable by name.
  std::optional<pid_t> pid;
  // Prefix of the name: "/proc/<pid>/root" for a live process (its own
  // view of the file system), a --sysroot, or "" for this host's /.
  std::string root;
};

// A mapped file, opened, and how.
struct OpenedMappedFile {
  Fd fd;
  // What was opened: "/proc/<pid>/map_files/<start>-<end>" or root + path.
  std::string opened_path;
  bool through_map_files = false;
};

// "/proc/<pid>/map_files/<start>-<end>", the hex digits as the kernel prints them.
std::string MapFilesPath(std::string_view proc_root, pid_t pid, uint64_t start, uint64_t end);

// Opens `file` for reading. For a live process, first through map_files:
// the kernel's own reference to the mapped file, whatever its name resolves
// to from here (a chroot, a toolbox or debugging container, a file replaced
// or shadowed since); the kernel allows that to root (CAP_SYS_ADMIN or
// CAP_CHECKPOINT_RESTORE) only. Then by name, root + path, unless the file
// was deleted. Errors: kPermissionDenied when the name exists but may not be
// read, kNotFound otherwise; the message names the path tried by name and
// why map_files did not serve.
[[nodiscard]] Result<OpenedMappedFile> OpenMappedFile(const MappedFileRef& file,
                                                      const MappedFileSource& source);

// "through /proc/12/map_files/7f00-7f10" or "by name, /proc/12/root/usr/lib/libc.so.6":
// for -v lines that say which one a command read.
std::string DescribeOpenedMappedFile(const OpenedMappedFile& opened);

}  // namespace memprof

#endif  // MEMPROF_COMMON_MAPPED_FILE_OPEN_H_
