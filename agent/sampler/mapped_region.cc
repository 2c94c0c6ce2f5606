#include "agent/sampler/mapped_region.h"

#include <sys/mman.h>
#include <unistd.h>

#include <utility>

namespace memprof::agent {

MappedRegion::~MappedRegion() {
  if (data_ != nullptr) munmap(data_, size_);
}

MappedRegion::MappedRegion(MappedRegion&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedRegion& MappedRegion::operator=(MappedRegion&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedRegion MappedRegion::Map(size_t bytes) {
  MappedRegion region;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t rounded = (bytes + page - 1) / page * page;
  if (rounded == 0) return region;
  void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return region;
  region.data_ = p;
  region.size_ = rounded;
  return region;
}

void MappedRegion::Zero() {
  if (data_ != nullptr) madvise(data_, size_, MADV_DONTNEED);
}

}  // namespace memprof::agent
