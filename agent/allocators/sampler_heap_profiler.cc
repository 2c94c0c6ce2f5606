#include "agent/allocators/sampler_heap_profiler.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "agent/sampler/sampler.h"

namespace memprof::agent {
namespace {

constexpr char kSamplerProfileStart[] = "heap_v2/";

// The dump starts where the file did before the write: check that it is a
// heap_v2 profile, as the jemalloc profiler does with jemalloc's.
Result<void> CheckProfileAt(int fd, off_t start) {
  char head[sizeof(kSamplerProfileStart) - 1] = {};
  if (pread(fd, head, sizeof(head), start) != static_cast<ssize_t>(sizeof(head)) ||
      std::memcmp(head, kSamplerProfileStart, sizeof(head)) != 0) {
    return Fail(ErrorCode::kInternal,
                "memprof's sampler wrote no heap_v2 profile (it does not start with "
                "\"heap_v2/\")");
  }
  return {};
}

}  // namespace

bool SamplerHeapProfiler::Active() const {
  std::lock_guard lock(mu_);
  return active_;
}

Result<void> SamplerHeapProfiler::ActivateLocked() {
  SamplerOptions options;
  options.sample_interval = interval_;
  options.skip_own_module = skip_own_module_;
  return Sampler::Activate(options);
}

Result<bool> SamplerHeapProfiler::SetActive(bool active) {
  std::lock_guard lock(mu_);
  const bool previous = active_;
  if (active) {
    if (auto r = ActivateLocked(); !r) return Fail(r.error());
  } else if (previous) {
    Sampler::Deactivate();
  }
  active_ = active;
  return previous;
}

uint64_t SamplerHeapProfiler::SampleInterval() const {
  std::lock_guard lock(mu_);
  return interval_;
}

Result<void> SamplerHeapProfiler::Reset(std::optional<unsigned> lg_sample) {
  if (lg_sample && *lg_sample > 40) {
    return Fail(ErrorCode::kInvalidArgument,
                "sample interval 2^" + std::to_string(*lg_sample) +
                    " bytes is too large (at most 2^40)");
  }
  std::lock_guard lock(mu_);
  Sampler::Reset();
  if (lg_sample) interval_ = uint64_t{1} << *lg_sample;
  // Active: the new interval applies from each thread's next sample.
  if (active_) return ActivateLocked();
  return {};
}

Result<uint64_t> SamplerHeapProfiler::WriteInto(int fd) {
  const off_t start = lseek(fd, 0, SEEK_CUR);
  if (start < 0) {
    return Fail(ErrorCode::kInternal,
                std::string("the dump file cannot be written: ") + std::strerror(errno));
  }
  auto size = Sampler::WriteProfile(fd);
  if (!size) return Fail(size.error());
  if (auto r = CheckProfileAt(fd, start); !r) return Fail(r.error());
  return *size;
}

SamplerHeapProfiler& MemprofSampler() {
  static SamplerHeapProfiler* const profiler = new SamplerHeapProfiler();
  return *profiler;
}

void DescribeMemprofSampler(AllocatorInfo& info) {
  SamplerHeapProfiler& sampler = MemprofSampler();
  info.sampler = "memprof";
  info.profiling_active = sampler.Active();
  info.sample_interval_bytes = sampler.SampleInterval();
}

bool MemprofSamplerServes(const Allocator& allocator) {
  auto profiler = allocator.ReadyProfiler();
  return profiler && *profiler == &MemprofSampler();
}

}  // namespace memprof::agent
