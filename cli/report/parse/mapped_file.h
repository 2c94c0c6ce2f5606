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

// A whole file mapped read-only into memory, for what reads a file whole
// rather than line by line: a gzip'd dump being inflated, an allocation
// profile. (A plain heap dump is read through a FileLineReader: mapping its
// pages cost more than parsing them.) Move-only; unmaps when destroyed.
class MappedFile {
 public:
  // kNotFound when `path` cannot be opened, kInternal when it cannot be mapped.
  [[nodiscard]] static Result<MappedFile> Open(const std::string& path);
  // The file `fd` has open (`path` names it in errors); kInternal when it
  // cannot be mapped.
  [[nodiscard]] static Result<MappedFile> Map(const Fd& fd, const std::string& path);

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

}  // namespace memprof::report::parse

#endif  // MEMPROF_CLI_REPORT_PARSE_MAPPED_FILE_H_
