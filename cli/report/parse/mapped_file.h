#ifndef MEMPROF_CLI_REPORT_PARSE_MAPPED_FILE_H_
#define MEMPROF_CLI_REPORT_PARSE_MAPPED_FILE_H_

#include <string>
#include <string_view>

#include "common/fd.h"
#include "common/result.h"

namespace memprof::report::parse {

// `path` opened for reading (close-on-exec); kNotFound, naming the path and
// why, when it cannot be.
[[nodiscard]] Result<Fd> OpenProfileFile(const std::string& path);

// Up to `bytes` from the start of `fd` (fewer at its end); empty on an error.
std::string ReadHead(int fd, size_t bytes);

// A whole file mapped read-only into memory. A dump is parsed in place, so
// reading it costs neither a copy nor a heap buffer: its pages belong to the
// page cache, which a report reads once from start to end. Only a window of
// it is resident at a time (ReadingAt). Move-only; unmaps when destroyed.
class MappedFile {
 public:
  // kNotFound when `path` cannot be opened, kInternal when it cannot be mapped.
  [[nodiscard]] static Result<MappedFile> Open(const std::string& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view text() const { return {data_, size_}; }

  // Reading has come to `offset` and goes on forward: the pages before it
  // leave this process (they stay in the page cache, and come back if read
  // again), and the next window ahead is mapped in one call rather than a
  // fault at a time. A 20 MB dump then adds a few megabytes to a report's
  // peak memory instead of 20.
  void ReadingAt(size_t offset);

 private:
  MappedFile(const char* data, size_t size) : data_(data), size_(size) {}
  void Unmap();

  const char* data_ = nullptr;
  size_t size_ = 0;
  size_t released_ = 0;   // pages below this have been let go
  size_t populated_ = 0;  // pages below this have been mapped ahead
};

}  // namespace memprof::report::parse

#endif  // MEMPROF_CLI_REPORT_PARSE_MAPPED_FILE_H_
