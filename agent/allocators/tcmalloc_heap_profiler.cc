#include "agent/allocators/tcmalloc_heap_profiler.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/logging/agent_logger.h"
#include "common/fd.h"

namespace memprof::agent {
namespace {

constexpr char kProfileStart[] = "heap profile:";

}  // namespace

bool TcmallocHeapProfiler::Active() const {
  std::lock_guard lock(mu_);
  return active_;
}

Result<bool> TcmallocHeapProfiler::SetActive(bool active) {
  return active ? Activate() : Deactivate();
}

Result<bool> TcmallocHeapProfiler::Activate() {
  // Refused, as jemalloc's without opt.prof, when tcmalloc does not sample.
  if (tcmalloc_.SamplePeriod() == 0) return Fail(tcmalloc_.HeapSample().error());
  std::lock_guard lock(mu_);
  const bool previous = active_;
  active_ = true;
  ever_activated_ = true;
  frozen_.reset();
  frozen_dropped_ = false;
  return previous;
}

Result<bool> TcmallocHeapProfiler::Deactivate() {
  if (!Active()) return false;  // deactivating twice keeps the first sample
  // Outside the lock: the sample takes tcmalloc's locks and may take a while.
  auto sample = tcmalloc_.HeapSample();
  if (!sample) return Fail(sample.error());
  std::shared_ptr<const std::string> frozen;
  if (sample->size() <= kMaxFrozenBytes) {
    frozen = std::make_shared<const std::string>(std::move(*sample));
  } else {
    Logger().warn("tcmalloc's heap sample at deactivation ({} bytes) is over {} bytes; not kept",
                  sample->size(), kMaxFrozenBytes);
  }
  std::lock_guard lock(mu_);
  const bool previous = active_;
  if (!previous) return false;  // someone else deactivated meanwhile
  active_ = false;
  frozen_ = std::move(frozen);
  frozen_dropped_ = frozen_ == nullptr;
  return previous;
}

Result<void> TcmallocHeapProfiler::Reset(std::optional<unsigned>) {
  return Fail(ErrorCode::kFailedPrecondition,
              "tcmalloc's sample period is fixed when the process starts "
              "(TCMALLOC_SAMPLE_PARAMETER=" + std::to_string(tcmalloc_.SamplePeriod()) +
                  ") and its samples cannot be discarded; restart the process with another "
                  "TCMALLOC_SAMPLE_PARAMETER to change it");
}

Result<std::shared_ptr<const std::string>> TcmallocHeapProfiler::CurrentProfile() const {
  {
    std::lock_guard lock(mu_);
    if (!ever_activated_) {
      return Fail(ErrorCode::kFailedPrecondition,
                  "heap profiling has not been activated in this tcmalloc process; run "
                  "`memprofctl activate` first (tcmalloc samples from start-up, and memprof "
                  "serves its samples once activated)");
    }
    if (!active_ && frozen_) return frozen_;
    if (!active_ && frozen_dropped_) {
      return Fail(ErrorCode::kFailedPrecondition,
                  "the heap sample taken at deactivation was too large to keep; activate "
                  "again to dump the live heap");
    }
  }
  auto sample = tcmalloc_.HeapSample();
  if (!sample) return Fail(sample.error());
  return std::make_shared<const std::string>(std::move(*sample));
}

Result<uint64_t> TcmallocHeapProfiler::WriteInto(int fd) {
  auto profile = CurrentProfile();
  if (!profile) return Fail(profile.error());
  const std::string& text = **profile;
  if (!text.starts_with(kProfileStart)) {
    return Fail(ErrorCode::kInternal,
                "tcmalloc's heap sample is not a gperftools heap profile (it does not start "
                "with \"heap profile:\")");
  }
  if (auto r = WriteAll(fd, text, "the heap profile"); !r) return Fail(r.error());
  return text.size();
}

}  // namespace memprof::agent
