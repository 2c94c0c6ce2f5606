#ifndef MEMPROF_AGENT_SAMPLER_MAPPED_REGION_H_
#define MEMPROF_AGENT_SAMPLER_MAPPED_REGION_H_

#include <cstddef>

namespace memprof::agent {

// Anonymous private memory straight from the kernel (mmap), never from the
// host's allocator: the sampler's tables are used inside the host's malloc,
// where allocating would recurse. Pages cost RSS only once touched, so a
// table sized for the worst case costs what it holds. Move-only; unmaps when
// destroyed (the process-wide sampler never destroys its own: a hook may
// still be reading them).
class MappedRegion {
 public:
  MappedRegion() = default;
  ~MappedRegion();
  MappedRegion(MappedRegion&& other) noexcept;
  MappedRegion& operator=(MappedRegion&& other) noexcept;
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;

  // `bytes` of zeroed memory, rounded up to pages; empty when mmap fails.
  static MappedRegion Map(size_t bytes);

  void* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return data_ == nullptr; }
  // Gives the pages back and leaves them zero (MADV_DONTNEED): a reset that
  // costs no write per slot and no RSS afterwards.
  void Zero();

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SAMPLER_MAPPED_REGION_H_
