#ifndef MEMPROF_CLI_IO_ATOMIC_FILE_WRITER_H_
#define MEMPROF_CLI_IO_ATOMIC_FILE_WRITER_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "common/fd.h"
#include "common/result.h"

namespace memprof::cli {

// Writes a file so that readers see either the old file or the complete new
// one, never a prefix. Data goes to an anonymous file in the destination's
// directory (O_TMPFILE): it has no name until Commit() links it in, so even a
// SIGKILLed memprofctl leaves nothing behind. Where the file system lacks
// O_TMPFILE, a private temp file `.<basename>.XXXXXX` is used instead (and a
// SIGKILL can leave that one). Commit() fsyncs, sets the final mode (0600: a
// profile is private, like a core file) and links or renames the file over
// the destination. Destroying the writer without a successful Commit()
// discards the data. Move-only; not thread-safe.
// Whether a file that already has the destination's name may be replaced:
// memprofctl replaces one only when told to (--force), so that a profile
// taken earlier is never lost to a repeated or mistyped command.
enum class ExistingFile { kRefuse, kReplace };

class AtomicFileWriter {
 public:
  // Creates the temp file. Fails before anything is written, with
  // kInvalidArgument (a usage error, as for --out-dir) when `path` names a
  // directory, when its directory does not exist or is not a directory, or
  // when `path` exists and `existing` is kRefuse; kPermissionDenied for
  // EACCES/EPERM; kInternal otherwise. Messages name the path. With kRefuse,
  // Commit() never replaces a file either, not even one that appeared while
  // the data was written.
  [[nodiscard]] static Result<AtomicFileWriter> Create(
      const std::string& path, ExistingFile existing = ExistingFile::kReplace);

  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();

  // Appends `data` (handles short writes and EINTR).
  [[nodiscard]] Result<void> Write(std::string_view data);

  // fsync + fchmod + rename + fsync of the directory. After success the
  // writer is done; after failure the temp file is still removed on destruction.
  [[nodiscard]] Result<void> Commit();

  // Like Commit(), but gives the data the name `path` (in the directory of
  // the path given to Create) only if nothing has that name yet: an existing
  // file is never replaced, not even in a race (linkat / renameat2 with
  // RENAME_NOREPLACE). Returns false, with the data kept, when the name is
  // taken, so the caller may try another name; true once committed (path()
  // is then `path`).
  [[nodiscard]] Result<bool> CommitNew(const std::string& path);

  const std::string& path() const { return path_; }
  // Where the data is while being written: the named temp file, or
  // /proc/self/fd/<n> for an anonymous one. Empty once committed or discarded.
  const std::string& temp_path() const { return temp_path_; }
  bool anonymous() const { return anonymous_; }

 private:
  AtomicFileWriter(std::string path, std::string temp_path, Fd fd, bool anonymous,
                   ExistingFile existing);
  void Discard();
  Result<void> SyncData();
  Result<void> LinkIntoPlace();

  std::string path_;
  std::string temp_path_;  // empty once committed or discarded
  Fd fd_;
  bool anonymous_ = false;
  ExistingFile existing_ = ExistingFile::kReplace;
  bool synced_ = false;  // SyncData() done
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_ATOMIC_FILE_WRITER_H_
