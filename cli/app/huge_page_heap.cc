#include "cli/app/huge_page_heap.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace memprof::cli {
namespace {

constexpr std::string_view kTunable = "glibc.malloc.hugetlb";

}  // namespace

std::optional<std::string> TunablesWithHugePages(const char* current) {
  const std::string setting = std::string(kTunable) + "=1";
  if (current == nullptr || *current == '\0') return setting;
  if (std::string_view(current).find(kTunable) != std::string_view::npos) return std::nullopt;
  return std::string(current) + ":" + setting;
}

bool WantsHugePageHeap(const std::vector<std::string>& args) {
  const auto end = std::find(args.begin(), args.end(), "--");
  if (std::find(args.begin(), end, "report") == end) return false;
  std::uintmax_t bytes = 0;
  for (auto it = args.begin(); it != end; ++it) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(*it, error)) continue;
    const std::uintmax_t size = std::filesystem::file_size(*it, error);
    if (!error) bytes += size;
  }
  return bytes >= kHugePageInputBytes;
}

bool HugePagesAvailable(std::string_view thp_enabled) {
  return !thp_enabled.empty() && thp_enabled.find("[never]") == std::string_view::npos;
}

void ReexecWithHugePageHeapIfWorthIt(char** argv, const std::vector<std::string>& args) {
  const char* previous = ::getenv("GLIBC_TUNABLES");
  const std::optional<std::string> tunables = TunablesWithHugePages(previous);
  if (!tunables || !WantsHugePageHeap(args)) return;
  std::ifstream mode_file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(mode_file, mode);
  if (!HugePagesAvailable(mode)) return;
  const std::optional<std::string> saved =
      previous != nullptr ? std::optional<std::string>(previous) : std::nullopt;
  if (::setenv("GLIBC_TUNABLES", tunables->c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  // Still here: run on ordinary pages, with the environment as it was.
  if (saved) {
    ::setenv("GLIBC_TUNABLES", saved->c_str(), 1);
  } else {
    ::unsetenv("GLIBC_TUNABLES");
  }
}

}  // namespace memprof::cli
