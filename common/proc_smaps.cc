#include "common/proc_smaps.h"

#include <algorithm>
#include <charconv>
#include <set>

namespace memprof {
namespace {

bool IsMappingLine(std::string_view line) {
  if (line.empty()) return false;
  const char c = line.front();
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

std::string_view NextField(std::string_view& rest) {
  const size_t begin = rest.find_first_not_of(' ');
  if (begin == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(begin);
  const size_t end = std::min(rest.find(' '), rest.size());
  std::string_view field = rest.substr(0, end);
  rest.remove_prefix(end);
  return field;
}

bool ParseHex(std::string_view text, uint64_t& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out, 16);
  return ec == std::errc() && ptr == text.data() + text.size();
}

// "7f..-7f.. rw-p 00000000 fe:00 1234   /path with spaces" -> a mapping.
bool ParseMappingLine(std::string_view line, SmapsMapping& out) {
  std::string_view rest = line;
  const std::string_view range = NextField(rest);
  const size_t dash = range.find('-');
  if (dash == std::string_view::npos || !ParseHex(range.substr(0, dash), out.start) ||
      !ParseHex(range.substr(dash + 1), out.end)) {
    return false;
  }
  out.perms = std::string(NextField(rest));
  for (int i = 0; i < 3; ++i) NextField(rest);  // offset, device, inode
  const size_t path = rest.find_first_not_of(' ');
  out.path = path == std::string_view::npos ? std::string() : std::string(rest.substr(path));
  return out.perms.size() == 4;
}

// "Rss:   1234 kB" -> 1234 * 1024 when `line` starts with `key`.
bool ReadKilobytes(std::string_view line, std::string_view key, uint64_t& out) {
  if (line.substr(0, key.size()) != key) return false;
  std::string_view rest = line.substr(key.size());
  const std::string_view number = NextField(rest);
  uint64_t kb = 0;
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), kb);
  if (ec != std::errc()) return false;
  out = kb * 1024;
  return true;
}

void ReadField(std::string_view line, SmapsMapping& mapping) {
  ReadKilobytes(line, "Rss:", mapping.rss_bytes) ||
      ReadKilobytes(line, "Anonymous:", mapping.anonymous_bytes) ||
      ReadKilobytes(line, "Swap:", mapping.swap_bytes);
}

template <typename Fn>
void ForEachLine(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    fn(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
}

bool IsAnonymous(const SmapsMapping& m) { return m.path.empty() || m.path.starts_with("[anon:"); }

bool IsSharedMemory(const SmapsMapping& m) {
  if (m.perms[3] != 's') return false;
  return m.path.empty() || m.path.starts_with("/dev/shm/") || m.path.starts_with("/SYSV") ||
         m.path.starts_with("/memfd:") || m.path.starts_with("/dev/zero") ||
         m.path.starts_with("[anon_shmem");
}

bool IsKernelCode(const std::string& path) {
  return path == "[vdso]" || path == "[vvar]" || path == "[vsyscall]" || path == "[vvar_vclock]";
}

// Files mapped executable anywhere in the process: programs and libraries.
std::set<std::string> ExecutableFiles(const std::vector<SmapsMapping>& mappings) {
  std::set<std::string> files;
  for (const SmapsMapping& m : mappings) {
    if (m.perms[2] == 'x' && m.path.starts_with('/')) files.insert(m.path);
  }
  return files;
}

}  // namespace

Result<std::vector<SmapsMapping>> ParseSmaps(std::string_view text) {
  std::vector<SmapsMapping> mappings;
  bool bad = false;
  ForEachLine(text, [&](std::string_view line) {
    if (bad || line.empty()) return;
    if (IsMappingLine(line)) {
      SmapsMapping mapping;
      if (!ParseMappingLine(line, mapping)) {
        bad = true;
        return;
      }
      mappings.push_back(std::move(mapping));
    } else if (!mappings.empty()) {
      ReadField(line, mappings.back());
    } else {
      bad = true;
    }
  });
  if (bad || (mappings.empty() && !text.empty())) {
    return Fail(ErrorCode::kInternal, "not the text of /proc/<pid>/smaps");
  }
  return mappings;
}

Result<uint64_t> ParseSmapsRollupRss(std::string_view text) {
  uint64_t rss = 0;
  bool found = false;
  ForEachLine(text, [&](std::string_view line) {
    if (!found) found = ReadKilobytes(line, "Rss:", rss);
  });
  if (!found) return Fail(ErrorCode::kInternal, "no Rss: line in /proc/<pid>/smaps_rollup");
  return rss;
}

std::vector<size_t> ThreadStackIndexes(const std::vector<SmapsMapping>& mappings) {
  std::vector<size_t> stacks;
  for (size_t i = 0; i < mappings.size(); ++i) {
    const SmapsMapping& m = mappings[i];
    if (m.path == "[stack]") {
      stacks.push_back(i);
      continue;
    }
    if (i == 0 || m.perms != "rw-p" || !IsAnonymous(m)) continue;
    const SmapsMapping& below = mappings[i - 1];
    if (below.perms == "---p" && IsAnonymous(below) && below.end == m.start &&
        below.size() <= kMaxThreadGuardBytes) {
      stacks.push_back(i);
    }
  }
  return stacks;
}

SmapsBreakdown BreakDownSmaps(const std::vector<SmapsMapping>& mappings, size_t top_n) {
  SmapsBreakdown b;
  const std::vector<size_t> stacks = ThreadStackIndexes(mappings);
  const std::set<std::string> executables = ExecutableFiles(mappings);
  std::vector<SmapsMapping> anonymous;
  size_t next_stack = 0;
  for (size_t i = 0; i < mappings.size(); ++i) {
    const SmapsMapping& m = mappings[i];
    b.rss_bytes += m.rss_bytes;
    if (next_stack < stacks.size() && stacks[next_stack] == i) {
      ++next_stack;
      ++b.thread_stacks;
      b.thread_stacks_bytes += m.rss_bytes;
    } else if (IsSharedMemory(m)) {
      b.shared_memory_bytes += m.rss_bytes;
    } else if (executables.contains(m.path) || IsKernelCode(m.path)) {
      b.binaries_bytes += m.rss_bytes;
    } else if (m.path.starts_with('/')) {
      b.other_files_bytes += m.rss_bytes;
    } else {
      b.anonymous_bytes += m.rss_bytes;
      if (m.rss_bytes > 0) anonymous.push_back(m);
    }
  }
  const size_t keep = std::min(top_n, anonymous.size());
  std::partial_sort(anonymous.begin(), anonymous.begin() + static_cast<std::ptrdiff_t>(keep),
                    anonymous.end(), [](const SmapsMapping& x, const SmapsMapping& y) {
                      return x.rss_bytes > y.rss_bytes;
                    });
  anonymous.resize(keep);
  b.top_anonymous = std::move(anonymous);
  return b;
}

}  // namespace memprof
