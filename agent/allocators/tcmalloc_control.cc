#include "agent/allocators/tcmalloc_control.h"

#include <dlfcn.h>
#include <gperftools/malloc_extension.h>

#include <charconv>
#include <mutex>

#include "agent/shared/host_symbols.h"

namespace memprof::agent {
namespace {

// MallocExtension::instance(), which has no C name.
constexpr char kInstanceSymbol[] = "_ZN15MallocExtension8instanceEv";
// Only libtcmalloc has the heap profiler; libtcmalloc_minimal has neither it
// nor the sampler.
constexpr char kHeapProfilerSymbol[] = "IsHeapProfilerRunning";
// GetStats writes at most this much; tcmalloc's report is a few KiB.
constexpr int kStatsBufferBytes = 64 * 1024;

constexpr const char* kPropertyNames[] = {
    "generic.current_allocated_bytes",        "generic.heap_size",
    "generic.total_physical_bytes",           "tcmalloc.pageheap_free_bytes",
    "tcmalloc.pageheap_unmapped_bytes",       "tcmalloc.central_cache_free_bytes",
    "tcmalloc.transfer_cache_free_bytes",     "tcmalloc.thread_cache_free_bytes",
    "tcmalloc.current_total_thread_cache_bytes", "tcmalloc.max_total_thread_cache_bytes",
    "tcmalloc.aggressive_memory_decommit",    "tcmalloc.heap_limit_mb",
};

std::string ObjectOf(void* addr) {
  Dl_info info{};
  if (addr == nullptr || dladdr(addr, &info) == 0 || info.dli_fname == nullptr) return {};
  return info.dli_fname;
}

}  // namespace

struct TcmallocControl::Probe {
  std::once_flag once;
  uint64_t sample_period = 0;
};

TcmallocControl::TcmallocControl(Functions fns, bool sampler_built_in)
    : fns_(fns), sampler_built_in_(sampler_built_in), probe_(std::make_shared<Probe>()) {}

std::optional<TcmallocControl> TcmallocControl::Detect() {
  void* property = HostSymbol("MallocExtension_GetNumericProperty");
  void* instance = HostSymbol(kInstanceSymbol);
  void* stats = HostSymbol("MallocExtension_GetStats");
  void* release = HostSymbol("MallocExtension_ReleaseFreeMemory");
  if (property == nullptr || instance == nullptr || stats == nullptr || release == nullptr) {
    return std::nullopt;
  }
  // As for jemalloc: a tcmalloc that is loaded but not the allocator does not
  // know the process heap.
  const std::string library = ObjectOf(property);
  if (ObjectOf(HostSymbol("malloc")) != library) return std::nullopt;
  Functions fns;
  fns.extension = reinterpret_cast<MallocExtension* (*)()>(instance)();
  fns.property = reinterpret_cast<PropertyFn>(property);
  fns.stats = reinterpret_cast<StatsFn>(stats);
  fns.release = reinterpret_cast<ReleaseFn>(release);
  fns.version = reinterpret_cast<VersionFn>(HostSymbol("tc_version"));
  if (fns.extension == nullptr) return std::nullopt;
  const bool sampler = ObjectOf(HostSymbol(kHeapProfilerSymbol)) == library;
  return TcmallocControl(fns, sampler);
}

std::string TcmallocControl::Version() const {
  if (fns_.version == nullptr) return {};
  int major = 0, minor = 0;
  const char* patch = nullptr;
  const char* version = fns_.version(&major, &minor, &patch);
  return version != nullptr ? std::string(version) : std::string();
}

uint64_t TcmallocControl::SamplePeriod() const {
  std::call_once(probe_->once, [this] {
    if (!sampler_built_in_) return;
    std::string sample;
    fns_.extension->GetHeapSample(&sample);
    probe_->sample_period = GperftoolsSamplePeriod(sample).value_or(0);
  });
  return probe_->sample_period;
}

std::vector<TcmallocProperty> TcmallocControl::Properties() const {
  std::vector<TcmallocProperty> out;
  for (const char* name : kPropertyNames) {
    size_t value = 0;
    if (fns_.property(name, &value) != 0) out.emplace_back(name, value);
  }
  return out;
}

Result<uint64_t> TcmallocControl::Property(const char* name) const {
  size_t value = 0;
  if (fns_.property(name, &value) == 0) {
    return Fail(ErrorCode::kFailedPrecondition,
                std::string("this tcmalloc has no property \"") + name + "\"");
  }
  return value;
}

Result<std::string> TcmallocControl::StatsReport() const {
  std::string buffer(kStatsBufferBytes, '\0');
  fns_.stats(buffer.data(), kStatsBufferBytes);
  buffer.resize(buffer.find('\0'));
  if (buffer.empty()) return Fail(ErrorCode::kInternal, "tcmalloc's GetStats produced no output");
  return buffer;
}

void TcmallocControl::ReleaseFreeMemory() const { fns_.release(); }

Result<std::string> TcmallocControl::HeapSample() const {
  if (SamplePeriod() == 0) {
    return Fail(ErrorCode::kFailedPrecondition,
                "tcmalloc was not sampling allocations when the process started, so its heap "
                "cannot be profiled; restart it with TCMALLOC_SAMPLE_PARAMETER=524288 (or use "
                "`memprofctl run --allocator tcmalloc`)");
  }
  std::string sample;
  fns_.extension->GetHeapSample(&sample);
  return sample;
}

std::optional<uint64_t> GperftoolsSamplePeriod(const std::string& profile) {
  // Without sampling tcmalloc puts "%warn" lines before the header.
  const size_t header = profile.find("heap profile:");
  if (header == std::string::npos) return std::nullopt;
  const size_t line_end = profile.find('\n', header);
  const std::string_view line(profile.data() + header,
                              (line_end == std::string::npos ? profile.size() : line_end) - header);
  constexpr std::string_view kLabel = "@ heap_v2/";
  const size_t label = line.find(kLabel);
  if (label == std::string_view::npos) return std::nullopt;
  const char* first = line.data() + label + kLabel.size();
  uint64_t period = 0;
  auto [end, ec] = std::from_chars(first, line.data() + line.size(), period);
  if (ec != std::errc() || end == first) return std::nullopt;
  return period;
}

}  // namespace memprof::agent
