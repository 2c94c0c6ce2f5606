#include "tests/integration/harness/process_gauges.h"

#include <dirent.h>
#include <unistd.h>

#include <climits>
#include <fstream>
#include <string_view>

#include "common/proc_status.h"
#include "common/text_file.h"
#include "tests/integration/harness/support_names.h"
#include "tests/support/occurrences.h"

namespace memprof::integration {
namespace {

constexpr std::string_view kDumpMemfdPrefix = "/memfd:memprof-heap-dump";
constexpr std::string_view kServerStoppedLine = "gRPC server stopped (idle)";

// Counts /proc/<pid>/fd entries, and among them the agent's dump memfds.
// False if the directory cannot be read (the process is gone).
bool CountFds(pid_t pid, ProcessGauges& g) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return false;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    ++g.fds;
    char target[PATH_MAX];
    const std::string link = dir + "/" + e->d_name;
    ssize_t n = ::readlink(link.c_str(), target, sizeof(target) - 1);
    if (n > 0 && std::string_view(target, static_cast<size_t>(n)).starts_with(kDumpMemfdPrefix)) {
      ++g.dump_memfds;
    }
  }
  ::closedir(d);
  return true;
}

}  // namespace

std::optional<ProcessGauges> ReadGauges(pid_t pid) {
  auto text = ReadTextFile("/proc/" + std::to_string(pid) + "/status");
  if (!text) return std::nullopt;
  auto status = ParseProcStatus(*text);
  if (!status) return std::nullopt;
  ProcessGauges g;
  g.threads = static_cast<int>(status->threads);
  g.rss_kb = status->vm_rss_bytes / 1024;
  if (!CountFds(pid, g)) return std::nullopt;
  return g;
}

bool ResetPeakRss(pid_t pid) {
  std::ofstream out("/proc/" + std::to_string(pid) + "/clear_refs");
  out << "5\n";
  return static_cast<bool>(out);
}

std::ostream& operator<<(std::ostream& os, const ProcessGauges& g) {
  return os << "threads " << g.threads << ", fds " << g.fds << " (" << g.dump_memfds
            << " dump memfds), RSS " << g.rss_kb << " kB";
}

ProcessGauges WaitForGaugesAtMost(pid_t pid, const ProcessGauges& baseline,
                                  const RssBound& max_rss_kb, std::chrono::milliseconds timeout) {
  ProcessGauges last;
  WaitUntil(
      [&] {
        std::optional<ProcessGauges> g = ReadGauges(pid);
        if (!g) return false;
        last = *g;
        return g->threads <= baseline.threads && g->fds <= baseline.fds && g->dump_memfds == 0 &&
               g->rss_kb <= max_rss_kb();
      },
      timeout, std::chrono::milliseconds(50));
  return last;
}

int CountServerStops(const std::string& stderr_text) {
  return static_cast<int>(test_support::CountOccurrences(stderr_text, kServerStoppedLine));
}

}  // namespace memprof::integration
