#include "tests/integration/harness/guest_fixture.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <sstream>
#include <string_view>

#include "common/fd.h"
#include "common/text_file.h"
#include "tests/integration/harness/support_names.h"
#include "tests/integration/harness/test_binaries.h"

namespace memprof::integration {
namespace {

// The numeric entries of a /proc directory (pids, tids, descriptors).
std::vector<int> NumericEntries(const std::string& dir) {
  std::vector<int> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    long n = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0') out.push_back(static_cast<int>(n));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The value of "Key:" in a /proc status-like text; nullopt if absent.
std::optional<std::string> FieldOf(const std::string& text, const std::string& key) {
  const std::string needle = key + ":";
  size_t at = text.rfind("\n" + needle);
  if (at != std::string::npos) {
    ++at;
  } else if (text.starts_with(needle)) {
    at = 0;
  } else {
    return std::nullopt;
  }
  at += needle.size();
  const size_t eol = text.find('\n', at);
  std::string value = text.substr(at, eol == std::string::npos ? std::string::npos : eol - at);
  value.erase(0, value.find_first_not_of(" \t"));
  return value;
}

std::optional<uint64_t> ParseBase(const std::optional<std::string>& text, int base) {
  if (!text || text->empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text->c_str(), &end, base);
  if (errno != 0 || end == text->c_str()) return std::nullopt;
  return static_cast<uint64_t>(v);
}

Error SocketError(const std::string& what) {
  return Error(ErrorCode::kUnavailable, what + ": " + std::strerror(errno));
}

// Waits until `fd` is ready for `events` or the deadline passes.
bool AwaitReady(int fd, short events, std::chrono::milliseconds timeout) {
  pollfd pfd{fd, events, 0};
  int rc;
  do {
    rc = ::poll(&pfd, 1, static_cast<int>(timeout.count()));
  } while (rc < 0 && errno == EINTR);
  return rc == 1;
}

}  // namespace

std::map<int, std::string> ReadFdTargets(pid_t pid) {
  std::map<int, std::string> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  for (int fd : NumericEntries(dir)) {
    char target[PATH_MAX];
    const std::string link = dir + "/" + std::to_string(fd);
    ssize_t n = ::readlink(link.c_str(), target, sizeof(target) - 1);
    if (n > 0) out[fd] = std::string(target, static_cast<size_t>(n));
  }
  return out;
}

std::optional<unsigned> ReadFdFlags(pid_t pid, int fd) {
  auto text = ReadTextFile("/proc/" + std::to_string(pid) + "/fdinfo/" + std::to_string(fd));
  if (!text) return std::nullopt;
  auto flags = ParseBase(FieldOf(*text, "flags"), 8);
  if (!flags) return std::nullopt;
  return static_cast<unsigned>(*flags);
}

std::vector<ThreadInfo> ReadThreads(pid_t pid) {
  std::vector<ThreadInfo> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  for (int tid : NumericEntries(dir)) {
    const std::string task = dir + "/" + std::to_string(tid);
    auto comm = ReadTextFile(task + "/comm");
    auto status = ReadTextFile(task + "/status");
    if (!comm || !status) continue;  // the thread just ended
    ThreadInfo t;
    t.tid = tid;
    t.comm = comm->substr(0, comm->find('\n'));
    t.sig_blk = ParseBase(FieldOf(*status, "SigBlk"), 16).value_or(0);
    out.push_back(std::move(t));
  }
  return out;
}

bool BlocksAllSignals(uint64_t sig_blk) {
  auto bit = [](int signo) { return uint64_t{1} << (signo - 1); };
  const uint64_t exempt = bit(SIGKILL) | bit(SIGSTOP) | bit(32) | bit(33);
  return (sig_blk | exempt) == ~uint64_t{0};
}

std::optional<uint64_t> ReadSignalMask(pid_t pid, const std::string& field) {
  auto text = ReadTextFile("/proc/" + std::to_string(pid) + "/status");
  if (!text) return std::nullopt;
  return ParseBase(FieldOf(*text, field), 16);
}

std::set<std::string> MappedLibraries(pid_t pid) {
  std::set<std::string> out;
  auto maps = ReadTextFile("/proc/" + std::to_string(pid) + "/maps");
  if (!maps) return out;
  std::istringstream lines(*maps);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string name = line.substr(line.rfind('/') + 1);
    if (name.find(".so") != std::string::npos) out.insert(std::move(name));
  }
  return out;
}

std::vector<std::string> HeavyLibraries(const std::set<std::string>& libraries) {
  // gRPC (libgrpc*, and its own libgpr and libupb), protobuf, abseil, OpenSSL.
  static constexpr std::string_view kPrefixes[] = {"libgrpc", "libgpr.", "libupb",    "libprotobuf",
                                                   "libabsl", "libssl.", "libcrypto."};
  std::vector<std::string> out;
  for (const std::string& name : libraries) {
    for (std::string_view prefix : kPrefixes) {
      if (name.starts_with(prefix)) {
        out.push_back(name);
        break;
      }
    }
  }
  return out;
}

Result<std::string> TcpRequest(uint16_t port, const std::string& line,
                               std::chrono::milliseconds timeout) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return Fail(SocketError("socket"));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno != EINPROGRESS) return Fail(SocketError("connect"));
    int err = 0;
    socklen_t len = sizeof(err);
    if (!AwaitReady(fd.get(), POLLOUT, timeout)) {
      return Fail(ErrorCode::kUnavailable, "connect: no answer in time");
    }
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    errno = err;
    if (err != 0) return Fail(SocketError("connect"));
  }
  const std::string request = line + "\n";
  if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    return Fail(SocketError("send"));
  }
  std::string reply;
  while (reply.find('\n') == std::string::npos) {
    if (!AwaitReady(fd.get(), POLLIN, timeout)) {
      return Fail(ErrorCode::kUnavailable, "no reply in time (got '" + reply + "')");
    }
    char buf[512];
    ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return Fail(SocketError("recv"));
    if (n == 0) return Fail(ErrorCode::kUnavailable, "closed before a full reply: '" + reply + "'");
    reply.append(buf, static_cast<size_t>(n));
  }
  return reply.substr(0, reply.find('\n'));
}

std::string GuestTest::SocketOf(pid_t pid) const { return SocketDir() + "/" + SocketName(pid); }

std::vector<std::string> GuestTest::SocketNames() const {
  std::vector<std::string> out;
  for (const std::string& name : dir().List()) {
    if (name.ends_with(".sock")) out.push_back(name);
  }
  return out;
}

nlohmann::json GuestTest::ListTargets() {
  CommandResult r = Cli({"list", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r;
  nlohmann::json j = ParseJsonOutput(r);
  if (!j.contains("targets") || !j["targets"].is_array()) {
    ADD_FAILURE() << "`list --json` has no \"targets\" array\n" << r;
    return nlohmann::json::array();
  }
  return j["targets"];
}

std::optional<nlohmann::json> GuestTest::FindTarget(const nlohmann::json& targets, pid_t pid) {
  for (const nlohmann::json& t : targets) {
    if (t.contains("pid") && t["pid"] == pid) return t;
  }
  return std::nullopt;
}

nlohmann::json GuestTest::Field(const nlohmann::json& entry, const std::string& key) {
  return entry.contains(key) ? entry.at(key) : nlohmann::json("<no " + key + " field>");
}

std::vector<pid_t> GuestTest::ListedPids(const nlohmann::json& targets) {
  std::vector<pid_t> out;
  for (const nlohmann::json& t : targets) {
    if (t.contains("pid") && t["pid"].is_number_integer()) out.push_back(t["pid"].get<pid_t>());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::vector<std::string>> GuestTest::StdoutMatches(TargetProcess& target,
                                                               const std::regex& pattern) {
  std::vector<std::vector<std::string>> out;
  const std::string text = target.process().StdoutText();
  for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it) {
    std::vector<std::string> groups;
    for (size_t i = 1; i < it->size(); ++i) groups.push_back((*it)[i]);
    out.push_back(std::move(groups));
  }
  return out;
}

std::vector<std::vector<std::string>> GuestTest::AwaitStdout(TargetProcess& target,
                                                             const std::regex& pattern,
                                                             size_t count,
                                                             std::chrono::milliseconds timeout) {
  if (!WaitUntil([&] { return StdoutMatches(target, pattern).size() >= count; }, timeout)) {
    ADD_FAILURE() << "the target's stdout never showed the expected line (" << count
                  << " wanted)\n--- stdout ---\n"
                  << target.process().StdoutText() << "\n--- stderr ---\n"
                  << target.process().StderrText();
  }
  return StdoutMatches(target, pattern);
}

void GuestTest::ExpectServed(pid_t pid) {
  CommandResult r = Cli({"status", "--pid", std::to_string(pid), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(ParseJsonOutput(r)["pid"], pid) << r;
}

std::string GuestTest::DumpUntilReportNames(pid_t pid, const std::string& function,
                                            std::chrono::milliseconds timeout) {
  const std::string path = dir().File("until-" + std::to_string(pid) + ".heap");
  std::string text;
  WaitUntil(
      [&] {
        // The same file each round: --force replaces the last one.
        CommandResult dump = Cli({"dump", "--pid", std::to_string(pid), "--out", path, "--force"});
        if (dump.exit_code != 0) {
          text = "dump failed: exit " + std::to_string(dump.exit_code) + ": " + dump.err;
          return true;  // no point in retrying
        }
        CommandResult report = Cli({"report", path});
        text = report.out + report.err;
        return report.exit_code == 0 && report.out.find(function) != std::string::npos;
      },
      timeout, std::chrono::milliseconds(200));
  ::unlink(path.c_str());
  return text;
}

}  // namespace memprof::integration
