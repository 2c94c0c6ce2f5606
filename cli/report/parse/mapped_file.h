#ifndef MEMPROF_CLI_REPORT_PARSE_MAPPED_FILE_H_
#define MEMPROF_CLI_REPORT_PARSE_MAPPED_FILE_H_

#include <string>
#include <string_view>

#include "common/result.h"

namespace memprof::analysis {

// A whole file mapped read-only into memory. A dump is parsed in place, so
// reading it costs neither a copy nor a heap buffer: its pages belong to the
// page cache, which a report reads once from start to end. Move-only; unmaps
// when destroyed.
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

 private:
  MappedFile(const char* data, size_t size) : data_(data), size_(size) {}
  void Unmap();

  const char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace memprof::analysis

#endif  // MEMPROF_CLI_REPORT_PARSE_MAPPED_FILE_H_
