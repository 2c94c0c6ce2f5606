#include "cli/report/parse/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/fd.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14
#endif

namespace memprof::report::parse {
namespace {

// How far ahead of the parse the file is mapped.
constexpr size_t kReadAhead = size_t{4} << 20;

}  // namespace

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
  struct stat info {};
  if (fstat(fd->get(), &info) != 0) {
    return Fail(ErrorCode::kInternal, path + ": cannot stat: " + std::strerror(errno));
  }
  const auto size = static_cast<size_t>(info.st_size);
  if (size == 0) return MappedFile(nullptr, 0);  // mmap refuses a length of 0
  void* data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd->get(), 0);
  if (data == MAP_FAILED) {
    return Fail(ErrorCode::kInternal, path + ": cannot map the heap profile: " +
                                          std::strerror(errno));
  }
  MappedFile file(static_cast<const char*>(data), size);
  file.ReadingAt(0);
  return file;
}

void MappedFile::ReadingAt(size_t offset) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* const base = const_cast<char*>(data_);
  const size_t done = std::min(offset, size_) / page * page;
  if (done > released_) {
    madvise(base + released_, done - released_, MADV_DONTNEED);
    released_ = done;
  }
  // Mapping ahead is an optimisation: a kernel without MADV_POPULATE_READ
  // (before 5.14) faults the pages in as they are read.
  const size_t ahead = std::min(size_, done + kReadAhead);
  if (ahead > populated_) {
    madvise(base + populated_, ahead - populated_, MADV_POPULATE_READ);
    populated_ = ahead;
  }
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      released_(std::exchange(other.released_, 0)),
      populated_(std::exchange(other.populated_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    released_ = std::exchange(other.released_, 0);
    populated_ = std::exchange(other.populated_, 0);
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
