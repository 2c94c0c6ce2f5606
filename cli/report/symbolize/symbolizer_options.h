#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOLIZER_OPTIONS_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOLIZER_OPTIONS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace memprof::report::symbolize {

struct SymbolizerOptions {
  // Prefix for every binary path of the maps: "/proc/<pid>/root" for a live
  // target in another mount namespace (a container); "" = the host's files.
  std::string sysroot;
  // A live target: binaries are opened through /proc/<pid>/map_files/<start>-<end>
  // first, which reaches the exact file that is mapped even when it was
  // deleted or replaced on disk (needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE).
  std::optional<pid_t> pid;
  // Also look up file:line (costs a line-table search per address).
  bool lines = false;
  // Name an address no symbol covers after the closest symbol below it, as
  // jeprof does, marked as a guess: "name+0x2a?" (Frame::guessed).
  bool nearest_symbol = false;
  // Roots for separate debug files: <dir>/.build-id/xx/yyyy.debug and
  // <dir>/<path of the binary's directory>/<debuglink name>. With a sysroot,
  // the same directories inside the sysroot are searched after these.
  std::vector<std::string> debug_dirs = {"/usr/lib/debug"};
};

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOLIZER_OPTIONS_H_
