#include "common/proc_status.h"

#include <algorithm>
#include <charconv>

namespace memprof {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Splits whitespace-separated unsigned numbers.
template <typename T>
std::vector<T> Numbers(std::string_view s) {
  std::vector<T> out;
  while (true) {
    s = Trim(s);
    if (s.empty()) break;
    T value{};
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc()) break;
    out.push_back(value);
    s.remove_prefix(static_cast<size_t>(ptr - s.data()));
  }
  return out;
}

void ApplyField(std::string_view key, std::string_view value, ProcStatus& st) {
  if (key == "Name") {
    st.name = std::string(value);
  } else if (key == "Pid" || key == "PPid" || key == "Threads") {
    auto n = Numbers<int64_t>(value);
    if (n.empty()) return;
    if (key == "Pid") st.pid = static_cast<pid_t>(n[0]);
    if (key == "PPid") st.ppid = static_cast<pid_t>(n[0]);
    if (key == "Threads") st.threads = static_cast<uint32_t>(n[0]);
  } else if (key == "Uid") {
    auto n = Numbers<uint32_t>(value);
    if (n.size() >= 2) {
      st.real_uid = n[0];
      st.effective_uid = n[1];
    }
  } else if (key == "NSpid") {
    for (int64_t p : Numbers<int64_t>(value)) st.ns_pids.push_back(static_cast<pid_t>(p));
  } else if (key == "VmRSS") {
    auto n = Numbers<uint64_t>(value);  // "1234 kB"
    if (!n.empty()) st.vm_rss_bytes = n[0] * 1024;
  }
}

// The whitespace-separated words of `s`.
std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> words;
  while (true) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\n')) s.remove_prefix(1);
    if (s.empty()) return words;
    const size_t end = s.find_first_of(" \n");
    words.push_back(s.substr(0, end));
    s.remove_prefix(end == std::string_view::npos ? s.size() : end);
  }
}

template <typename T>
bool ParseNumber(std::string_view word, T& value) {
  auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  return ec == std::errc() && ptr == word.data() + word.size();
}

}  // namespace

Result<ProcStatus> ParseProcStatus(std::string_view text) {
  ProcStatus st;
  bool saw_pid = false;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    saw_pid = saw_pid || key == "Pid";
    ApplyField(key, Trim(line.substr(colon + 1)), st);
  }
  if (!saw_pid) return Fail(ErrorCode::kInternal, "not a /proc/<pid>/status file (no Pid: line)");
  return st;
}

Result<ProcStat> ParseProcStat(std::string_view text) {
  // Fields after the comm, counted from 0: state is field 3, so field N is N - 3.
  constexpr size_t kState = 0, kPpid = 1, kStartTime = 19;
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  ProcStat stat;
  if (open == std::string_view::npos || close == std::string_view::npos || close < open ||
      !ParseNumber(Trim(text.substr(0, open)), stat.pid)) {
    return Fail(ErrorCode::kInternal, "not a /proc/<pid>/stat line (no \"pid (comm)\")");
  }
  stat.comm = std::string(text.substr(open + 1, close - open - 1));
  const std::vector<std::string_view> rest = Words(text.substr(close + 1));
  if (rest.size() <= kStartTime || rest[kState].size() != 1 ||
      !ParseNumber(rest[kPpid], stat.ppid) || !ParseNumber(rest[kStartTime], stat.start_ticks)) {
    return Fail(ErrorCode::kInternal, "not a /proc/<pid>/stat line (fields after the comm)");
  }
  stat.state = rest[kState].front();
  return stat;
}

Result<int64_t> ParseBootTime(std::string_view text) {
  constexpr std::string_view kKey = "btime ";
  for (size_t at = 0; at < text.size();) {
    const size_t eol = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, eol - at);
    int64_t seconds = 0;
    if (line.starts_with(kKey) && ParseNumber(Trim(line.substr(kKey.size())), seconds)) {
      return seconds;
    }
    at = eol + 1;
  }
  return Fail(ErrorCode::kInternal, "no btime line in /proc/stat");
}

std::chrono::system_clock::time_point ProcessStartTime(int64_t boot_time, uint64_t start_ticks,
                                                       long ticks_per_second) {
  using std::chrono::microseconds;
  const auto hz = static_cast<uint64_t>(ticks_per_second > 0 ? ticks_per_second : 100);
  const auto after_boot = microseconds(
      static_cast<int64_t>(start_ticks / hz * 1000000 + start_ticks % hz * 1000000 / hz));
  return std::chrono::system_clock::time_point(std::chrono::seconds(boot_time)) + after_boot;
}

std::vector<std::string> ParseCmdline(std::string_view text) {
  std::vector<std::string> args;
  while (!text.empty()) {
    size_t nul = text.find('\0');
    args.emplace_back(text.substr(0, nul));
    if (nul == std::string_view::npos) break;
    text.remove_prefix(nul + 1);
  }
  return args;
}

}  // namespace memprof
