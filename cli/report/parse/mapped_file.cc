#include "cli/report/parse/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/fd.h"

namespace memprof::analysis {

Result<MappedFile> MappedFile::Open(const std::string& path) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    return Fail(ErrorCode::kNotFound,
                path + ": cannot open the heap profile: " + std::strerror(errno));
  }
  struct stat info {};
  if (fstat(fd.get(), &info) != 0) {
    return Fail(ErrorCode::kInternal, path + ": cannot stat: " + std::strerror(errno));
  }
  const auto size = static_cast<size_t>(info.st_size);
  if (size == 0) return MappedFile(nullptr, 0);  // mmap refuses a length of 0
  // MAP_POPULATE maps every page up front: one call instead of a fault per
  // few pages while parsing.
  void* data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
  if (data == MAP_FAILED) {
    return Fail(ErrorCode::kInternal, path + ": cannot map the heap profile: " +
                                          std::strerror(errno));
  }
  return MappedFile(static_cast<const char*>(data), size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { Unmap(); }

void MappedFile::Unmap() {
  if (data_ != nullptr) munmap(const_cast<char*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace memprof::analysis
