#include "cli/report/profile_loader.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>
#include <utility>

#include "cli/report/analysis/heap_dump_reader.h"
#include "cli/report/analysis/unsample.h"

namespace memprof::report {
namespace {

constexpr unsigned kMaxThreads = 4;

}  // namespace

unsigned ReportThreadCount() {
  return std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
}

Result<analysis::HeapProfile> LoadProfile(const std::string& path) {
  auto dump = analysis::ParseHeapDumpFile(path);
  if (!dump) return Fail(dump.error());
  return analysis::Unsample(std::move(*dump));
}

Result<std::vector<analysis::HeapProfile>> LoadProfiles(const std::vector<std::string>& paths) {
  std::vector<std::optional<Result<analysis::HeapProfile>>> loaded(paths.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < paths.size(); i = next++) loaded[i] = LoadProfile(paths[i]);
  };
  {
    const size_t workers = std::min<size_t>(ReportThreadCount(), paths.size());
    std::vector<std::jthread> threads;
    for (size_t i = 1; i < workers; ++i) threads.emplace_back(work);
    work();
  }
  std::vector<analysis::HeapProfile> profiles;
  profiles.reserve(paths.size());
  for (std::optional<Result<analysis::HeapProfile>>& result : loaded) {
    if (!*result) return Fail(result->error());
    profiles.push_back(std::move(**result));
  }
  return profiles;
}

}  // namespace memprof::report
