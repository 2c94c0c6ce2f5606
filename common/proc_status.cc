#include "common/proc_status.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "common/fd.h"

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

Result<std::string> ReadTextFile(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    int err = errno;
    ErrorCode code = err == ENOENT || err == ESRCH ? ErrorCode::kNotFound
                     : err == EACCES || err == EPERM ? ErrorCode::kPermissionDenied
                                                     : ErrorCode::kInternal;
    return Fail(code, "cannot read " + path + ": " + std::strerror(err));
  }
  std::string out;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ErrorCode code = err == ESRCH ? ErrorCode::kNotFound : ErrorCode::kInternal;
      return Fail(code, "cannot read " + path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace memprof
