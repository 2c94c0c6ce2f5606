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
// few KiB to a few hundred (a process with thousands of mappings). The
// first try reads little: a fresh 1 MiB buffer is 256 page faults, which
// took up to 8 ms on a VM where the whole report takes 90.
constexpr size_t kFirstPeekBytes = 64u << 10;
constexpr size_t kPeekBytes = 1u << 20;

// The last `bytes` (at most) of the file open on `fd`, `size` bytes long
// ("" if they cannot be read).
std::string FileTail(int fd, size_t size, size_t bytes) {
  std::string tail(std::min(size, bytes), '\0');
  const ssize_t got = pread(fd, tail.data(), tail.size(), static_cast<off_t>(size - tail.size()));
  if (got != static_cast<ssize_t>(tail.size())) return {};
  return tail;
}

// The end of the file at `path` from its last MAPPED_LIBRARIES marker on
// ("" if there is none in its last kPeekBytes).
std::string MapsSectionOf(const std::string& path) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat info {};
  if (!fd || fstat(fd.get(), &info) != 0 || info.st_size <= 0) return {};
  const auto size = static_cast<size_t>(info.st_size);
  for (size_t bytes : {kFirstPeekBytes, kPeekBytes}) {
    std::string tail = FileTail(fd.get(), size, bytes);
    const size_t marker = tail.rfind(kMapsMarker);
    if (marker != std::string::npos) return tail.substr(marker);
    if (tail.size() == size) break;  // the whole file was read
  }
  return {};
}

}  // namespace

unsigned ReportThreadCount() {
  return std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
}

std::vector<std::string> PeekMappedLibraries(const std::string& path) {
  const std::string section = MapsSectionOf(path);
  std::string_view text = section;
  if (text.empty()) return {};
  text.remove_prefix(kMapsMarker.size());
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
                                        const report::parse::StackObserver& observer,
                                        std::vector<size_t>* merged) {
  auto dump = report::parse::ParseHeapDumpFile(path, {}, observer);
  if (!dump) return Fail(dump.error());
  return report::aggregate::Unsample(std::move(*dump), merged);
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
