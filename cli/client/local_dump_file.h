#ifndef MEMPROF_CLI_CLIENT_LOCAL_DUMP_FILE_H_
#define MEMPROF_CLI_CLIENT_LOCAL_DUMP_FILE_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/fd.h"
#include "common/result.h"
#include "memprof/v1/memory_profile.pb.h"

namespace memprof::cli {

// Whether this process may open the files of local process `pid`
// (/proc/<pid>/fd/<n>): the kernel asks what it asks for reading the
// process's memory, which reading the link /proc/<pid>/exe asks too.
bool CanOpenFilesOf(pid_t pid);

// The kDataLoss error of a dump transfer that failed: "heap profile
// transfer failed: <what>".
[[nodiscard]] std::unexpected<Error> TransferLoss(const std::string& what);

// The agent's in-memory file of one dump, opened by this process through
// /proc (DumpRequest.local_file), so that the profile's bytes never cross
// the socket: the agent only says how far jemalloc has written.
class LocalDumpFile {
 public:
  using Writer = std::function<Result<void>(std::string_view data)>;

  // Opens the file the metadata names in process `pid`: the agent's
  // descriptors are in a table of the agent's threads (the main thread has
  // the host's), so /proc/<pid>/task/<tid>/fd/<n>, first of the thread the
  // agent named (when it sees the same pid namespace), then of every thread.
  // What is opened must be that file (its device and inode): the same number
  // in the host's table is another file. kPermissionDenied when the kernel
  // refuses; kNotFound when no thread has the file (the dump ended).
  [[nodiscard]] static Result<LocalDumpFile> Open(pid_t pid,
                                                  const memprof::v1::DumpMetadata& metadata);

  // Hands the bytes from where the last call stopped up to `end` to `write`,
  // in pieces of at most 1 MiB. kDataLoss if the file holds fewer bytes than
  // that (the agent said they were written).
  [[nodiscard]] Result<void> CopyUpTo(uint64_t end, const Writer& write);

  // Where it was opened: /proc/<pid>/task/<tid>/fd/<n>.
  const std::string& path() const { return path_; }

  // Lets go of the file: at once after the last byte, while the agent still
  // holds it (whoever lets go last has the kernel free all its pages; see
  // DumpLinger).
  void Close() { fd_.Reset(); }

 private:
  LocalDumpFile(Fd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}

  // The file at `path` if it is the one `metadata` names (looked at before
  // it is opened); an empty Fd if the path is another file or none,
  // `refused` set if the kernel said no.
  static Fd OpenIfNamed(const std::string& path, const memprof::v1::DumpMetadata& metadata,
                        bool& refused);

  Fd fd_;
  std::string path_;
  uint64_t copied_ = 0;
  std::string buffer_;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_LOCAL_DUMP_FILE_H_
