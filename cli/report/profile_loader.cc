#include "cli/report/profile_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include "cli/report/aggregate/unsample.h"
#include "cli/report/parse/heap_dump_reader.h"
#include "common/fd.h"

namespace memprof::report {
namespace {

constexpr unsigned kMaxThreads = 4;
constexpr std::string_view kMapsMarker = "\nMAPPED_LIBRARIES:";
// How much of a dump's end PeekMappedLibraries reads: its maps section is a
// few KiB to a few hundred (a process with thousands of mappings).
constexpr size_t kPeekBytes = 1u << 20;

// The last kPeekBytes of the file at `path` ("" if it cannot be read).
std::string FileTail(const std::string& path) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat info {};
  if (!fd || fstat(fd.get(), &info) != 0 || info.st_size <= 0) return {};
  const auto size = static_cast<size_t>(info.st_size);
  std::string tail(std::min(size, kPeekBytes), '\0');
  const ssize_t got = pread(fd.get(), tail.data(), tail.size(),
                            static_cast<off_t>(size - tail.size()));
  if (got != static_cast<ssize_t>(tail.size())) return {};
  return tail;
}

}  // namespace

unsigned ReportThreadCount() {
  return std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
}

std::vector<std::string> PeekMappedLibraries(const std::string& path) {
  const std::string tail = FileTail(path);
  std::string_view text = tail;
  const size_t marker = text.rfind(kMapsMarker);
  if (marker == std::string_view::npos) return {};
  text.remove_prefix(marker + kMapsMarker.size());
  const size_t first = text.find('\n');
  if (first == std::string_view::npos) return {};
  text.remove_prefix(first + 1);
  std::vector<std::string> lines;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.emplace_back(line);
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  // An allocation profile ends its maps with this line (its parser drops it).
  if (!lines.empty() && lines.back() == "--- end") lines.pop_back();
  return lines;
}

Result<report::HeapProfile> LoadProfile(const std::string& path,
                                        const report::parse::StackObserver& observer) {
  auto dump = report::parse::ParseHeapDumpFile(path, {}, observer);
  if (!dump) return Fail(dump.error());
  return report::aggregate::Unsample(std::move(*dump));
}

Result<std::vector<report::HeapProfile>> LoadProfiles(const std::vector<std::string>& paths) {
  std::vector<std::optional<Result<report::HeapProfile>>> loaded(paths.size());
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
  std::vector<report::HeapProfile> profiles;
  profiles.reserve(paths.size());
  for (std::optional<Result<report::HeapProfile>>& result : loaded) {
    if (!*result) return Fail(result->error());
    profiles.push_back(std::move(**result));
  }
  return profiles;
}

}  // namespace memprof::report
