#include "cli/report/parse/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/fd.h"

namespace memprof::report::parse {

Result<Fd> OpenProfileFile(const std::string& path) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    return Fail(ErrorCode::kNotFound,
                path + ": cannot open the heap profile: " + std::strerror(errno));
  }
  return fd;
}

std::string ReadHead(int fd, size_t bytes) {
  std::string head(bytes, '\0');
  size_t got = 0;
  while (got < bytes) {
    const ssize_t n = pread(fd, head.data() + got, bytes - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return {};
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  head.resize(got);
  return head;
}

Result<MappedFile> MappedFile::Open(const std::string& path) {
  Result<Fd> fd = OpenProfileFile(path);
  if (!fd) return Fail(fd.error());
  return Map(*fd, path);
}

Result<MappedFile> MappedFile::Map(const Fd& fd, const std::string& path) {
  struct stat info {};
  if (fstat(fd.get(), &info) != 0) {
    return Fail(ErrorCode::kInternal, path + ": cannot stat: " + std::strerror(errno));
  }
  const auto size = static_cast<size_t>(info.st_size);
  if (size == 0) return MappedFile(nullptr, 0);  // mmap refuses a length of 0
  void* data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
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

}  // namespace memprof::report::parse
