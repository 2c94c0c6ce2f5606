#ifndef MEMPROF_CLI_ATOMIC_FILE_WRITER_H_
#define MEMPROF_CLI_ATOMIC_FILE_WRITER_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "common/fd.h"
#include "common/result.h"

namespace memprof::cli {

// Writes a file so that readers see either the old file or the complete new
// one, never a prefix: data goes to a private temp file `.<basename>.XXXXXX`
// (mode 0600) in the destination's directory, and Commit() fsyncs it, sets
// the final mode (0600: a profile is private, like a core file) and renames it over the destination.
// Destroying the writer without a successful Commit() removes the temp file.
// Move-only; not thread-safe.
class AtomicFileWriter {
 public:
  // Creates the temp file. Fails before anything is written when the
  // destination is a directory or its directory is missing or not writable:
  // kPermissionDenied for EACCES/EPERM, kInvalidArgument when `path` names a
  // directory, kInternal otherwise. Messages name the path.
  [[nodiscard]] static Result<AtomicFileWriter> Create(const std::string& path);

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

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  AtomicFileWriter(std::string path, std::string temp_path, Fd fd, mode_t final_mode);
  void Discard();

  std::string path_;
  std::string temp_path_;  // empty once committed or discarded
  Fd fd_;
  mode_t final_mode_ = 0644;
};

// The directory part of `path` ("." when it has none).
std::string DirectoryOf(const std::string& path);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_ATOMIC_FILE_WRITER_H_
