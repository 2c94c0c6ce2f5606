#include "agent/allocators/jemalloc_control.h"

#include <dlfcn.h>
#include <sys/types.h>

#include <cerrno>
#include <cstring>

#include "agent/shared/host_symbols.h"

namespace memprof::agent {
namespace {

// jemalloc's MALLCTL_ARENAS_ALL (4096): "every arena" in arena.<i>.* and
// stats.arenas.<i>.* names. Spelled here because jemalloc.h is not included.
#define MEMPROF_ARENAS_ALL "4096"

// What an errno from mallctl(name) means, in jemalloc's terms.
Error MallctlError(const char* name, int err) {
  std::string what = std::string("jemalloc mallctl(\"") + name + "\") failed: ";
  switch (err) {
    case ENOENT:
      if (std::strncmp(name, "prof.", 5) == 0 ||
          std::strncmp(name, "experimental.prof_recent.", 25) == 0) {
        return Error(ErrorCode::kFailedPrecondition,
                     what + "heap profiling is not enabled in this process (opt.prof=false)");
      }
      return Error(ErrorCode::kFailedPrecondition, what + "not available in this jemalloc build");
    case EPERM:
      return Error(ErrorCode::kFailedPrecondition, what + "not writable");
    case EINVAL:
      return Error(ErrorCode::kInternal, what + "invalid value or size");
    case EFAULT:
      return Error(ErrorCode::kInternal, what + "jemalloc could not open or write the output");
    case EAGAIN:
      return Error(ErrorCode::kUnavailable, what + "jemalloc is busy (try again)");
    default:
      return Error(ErrorCode::kInternal, what + "error " + std::to_string(err));
  }
}

void AppendToString(void* opaque, const char* text) {
  static_cast<std::string*>(opaque)->append(text);
}

// Which shared object (or the executable) defines `addr`.
std::string ObjectOf(void* addr) {
  Dl_info info{};
  if (addr == nullptr || dladdr(addr, &info) == 0 || info.dli_fname == nullptr) return {};
  return info.dli_fname;
}

// An agent built with AddressSanitizer or ThreadSanitizer (the sanitizer
// stages of `bash dev.sh test`, never a shipped build) lives in a process whose
// malloc is the sanitizer's, whatever the host links: jemalloc there serves
// mallctl and nothing else. Such an agent controls the loaded jemalloc as if it
// were the allocator, so that its control and dump paths run under the
// sanitizer; its profiles hold none of the host's allocations
// (docs/reliability.md).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerServesMalloc = true;
#else
constexpr bool kSanitizerServesMalloc = false;
#endif

}  // namespace

std::optional<JemallocControl> JemallocControl::Detect() {
  void* mallctl = HostSymbol("mallctl");
  void* stats_print = HostSymbol("malloc_stats_print");
  if (mallctl == nullptr || stats_print == nullptr) return std::nullopt;
  // jemalloc can be loaded without being the allocator (e.g. linked by a
  // library that lost the symbol race to libc): then its numbers are not the
  // process heap, and profiling it would be misleading.
  if (!kSanitizerServesMalloc && ObjectOf(HostSymbol("malloc")) != ObjectOf(mallctl)) {
    return std::nullopt;
  }
  return JemallocControl(reinterpret_cast<MallctlFn>(mallctl),
                         reinterpret_cast<StatsPrintFn>(stats_print));
}

template <typename T>
Result<T> JemallocControl::Read(const char* name) const {
  T value{};
  size_t size = sizeof(value);
  int err = mallctl_(name, &value, &size, nullptr, 0);
  if (err != 0) return Fail(MallctlError(name, err));
  return value;
}

template <typename T>
Result<T> JemallocControl::Exchange(const char* name, T value) const {
  T old{};
  size_t size = sizeof(old);
  int err = mallctl_(name, &old, &size, &value, sizeof(value));
  if (err != 0) return Fail(MallctlError(name, err));
  return old;
}

Result<void> JemallocControl::Write(const char* name, const void* value, size_t size) const {
  int err = mallctl_(name, nullptr, nullptr, const_cast<void*>(value), size);
  if (err != 0) return Fail(MallctlError(name, err));
  return {};
}

std::string JemallocControl::Version() const {
  auto v = Read<const char*>("version");
  return (v && *v != nullptr) ? std::string(*v) : std::string();
}

bool JemallocControl::ProfilingSupported() const { return Read<bool>("config.prof").value_or(false); }

bool JemallocControl::ProfilingEnabled() const { return Read<bool>("opt.prof").value_or(false); }

bool JemallocControl::ProfilingActive() const { return Read<bool>("prof.active").value_or(false); }

Result<bool> JemallocControl::SetActive(bool active) const {
  return Exchange<bool>("prof.active", active);
}

uint64_t JemallocControl::SampleInterval() const {
  auto lg = Read<size_t>("prof.lg_sample");
  if (!lg) lg = Read<size_t>("opt.lg_prof_sample");
  if (!lg || *lg >= 64) return 0;
  return uint64_t{1} << *lg;
}

Result<void> JemallocControl::Reset(std::optional<unsigned> lg_sample) const {
  // prof.reset reads an optional size_t; without one it keeps prof.lg_sample.
  if (!lg_sample) return Write("prof.reset", nullptr, 0);
  const size_t value = *lg_sample;
  return Write("prof.reset", &value, sizeof(value));
}

Result<void> JemallocControl::DumpTo(const std::string& path) const {
  // prof.dump takes a `const char*` by value: pass the address of the pointer.
  const char* filename = path.c_str();
  return Write("prof.dump", &filename, sizeof(filename));
}

Result<HeapSummary> JemallocControl::ReadSummary() const {
  uint64_t epoch = 1;
  if (auto r = Write("epoch", &epoch, sizeof(epoch)); !r) return Fail(r.error());
  HeapSummary s;
  struct Field { const char* name; uint64_t* out; };
  const Field fields[] = {{"stats.allocated", &s.allocated}, {"stats.active", &s.active},
                          {"stats.metadata", &s.metadata},   {"stats.resident", &s.resident},
                          {"stats.mapped", &s.mapped},       {"stats.retained", &s.retained}};
  for (const Field& f : fields) {
    auto v = Read<size_t>(f.name);
    if (!v) return Fail(v.error());
    *f.out = *v;
  }
  return s;
}

Result<uint64_t> JemallocControl::ReadAllocated() const {
  uint64_t epoch = 1;
  if (auto r = Write("epoch", &epoch, sizeof(epoch)); !r) return Fail(r.error());
  auto allocated = Read<size_t>("stats.allocated");
  if (!allocated) return Fail(allocated.error());
  return static_cast<uint64_t>(*allocated);
}

Result<std::string> JemallocControl::StatsReport(bool json) const {
  std::string out;
  // The callback only appends to a string; jemalloc buffers its output and
  // holds none of the allocation-path locks while calling it.
  stats_print_(&AppendToString, &out, json ? "J" : "");
  if (out.empty()) return Fail(ErrorCode::kInternal, "malloc_stats_print produced no output");
  return out;
}

Result<uint64_t> JemallocControl::UnusedBytes() const {
  uint64_t epoch = 1;
  if (auto r = Write("epoch", &epoch, sizeof(epoch)); !r) return Fail(r.error());
  auto page = Read<size_t>("arenas.page");
  if (!page) return Fail(page.error());
  auto dirty = Read<size_t>("stats.arenas." MEMPROF_ARENAS_ALL ".pdirty");
  if (!dirty) return Fail(dirty.error());
  auto muzzy = Read<size_t>("stats.arenas." MEMPROF_ARENAS_ALL ".pmuzzy");
  if (!muzzy) return Fail(muzzy.error());
  return static_cast<uint64_t>(*dirty + *muzzy) * *page;
}

Result<void> JemallocControl::PurgeAllArenas() const {
  return Write("arena." MEMPROF_ARENAS_ALL ".purge", nullptr, 0);
}

Result<int64_t> JemallocControl::RecentAllocMax() const {
  auto max = Read<ssize_t>("experimental.prof_recent.alloc_max");
  if (!max) return Fail(max.error());
  return static_cast<int64_t>(*max);
}

Result<int64_t> JemallocControl::SetRecentAllocMax(int64_t max) const {
  auto old = Exchange<ssize_t>("experimental.prof_recent.alloc_max", static_cast<ssize_t>(max));
  if (!old) return Fail(old.error());
  return static_cast<int64_t>(*old);
}

Result<void> JemallocControl::DumpRecentAllocations(WriteCb write, void* opaque) const {
  // The control takes a {write_cb, cbopaque} pair by value.
  struct WritePacket {
    WriteCb write;
    void* opaque;
  } packet{write, opaque};
  return Write("experimental.prof_recent.alloc_dump", &packet, sizeof(packet));
}

std::string JemallocControl::ProfTimeResolution() const {
  auto v = Read<const char*>("opt.prof_time_resolution");
  return (v && *v != nullptr) ? std::string(*v) : std::string("default");
}

}  // namespace memprof::agent
