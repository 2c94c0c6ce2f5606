#include "tests/integration/harness/netns_fixture.h"

#include "tests/integration/harness/target_process.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <system_error>

#include "common/text_file.h"
#include "tests/integration/harness/support_names.h"
#include "tests/integration/harness/target_process.h"
#include "tests/support/debian_tools.h"

namespace memprof::integration {
namespace {

using std::chrono::seconds;

constexpr char kNamePrefix[] = "memprof-";
constexpr char kNetnsDir[] = "/run/netns";
constexpr char kEnv[] = "/usr/bin/env";

// iproute2's ip once the shared check says it runs (checked once per
// process), else "". Subprocess does no PATH lookup: it needs the path.
std::string FindIp() {
  std::string path;
  return test_support::CanRun(test_support::Ip(), &path) ? path : "";
}

Result<void> Ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {FindIp()};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = RunCommand(argv, {}, seconds(30));
  if (r.exit_code != 0) {
    return Fail(ErrorCode::kInternal, JoinArgv(argv) + " failed (exit code " +
                                          std::to_string(r.exit_code) + "): " + r.err);
  }
  return {};
}

void DeleteNamespace(const std::string& name) { (void)Ip({"netns", "delete", name}); }

// The pid in a name "memprof-<pid>-...", or 0.
pid_t OwnerOf(const std::string& name) {
  if (!name.starts_with(kNamePrefix)) return 0;
  const char* begin = name.c_str() + sizeof(kNamePrefix) - 1;
  pid_t pid = 0;
  auto [end, ec] = std::from_chars(begin, name.c_str() + name.size(), pid);
  return ec == std::errc() && *end == '-' ? pid : 0;
}

// Namespaces of test processes that died before their destructors ran.
void RemoveLeftovers() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(kNetnsDir, ec)) {
    const std::string name = entry.path().filename().string();
    const pid_t owner = OwnerOf(name);
    if (owner > 0 && ::kill(owner, 0) != 0 && errno == ESRCH) DeleteNamespace(name);
  }
}

std::string ProbeOnce() {
  if (auto ip = test_support::CanRun(test_support::Ip()); !ip) return ip.message();
  if (::access(kEnv, X_OK) != 0) return std::string(kEnv) + " is missing";
  auto netns = NetnsFixture::Create(NetnsOptions{"10.77.250"});
  if (netns) return "";
  return (::geteuid() != 0 ? "not running as root; " : "") + netns.error().message;
}

// Inodes of the sockets listening on `port` in the namespace of `pid`.
std::set<std::string> ListenerInodes(pid_t pid, uint16_t port) {
  char hex_port[8];
  std::snprintf(hex_port, sizeof(hex_port), ":%04X", static_cast<unsigned>(port));
  std::set<std::string> inodes;
  for (const char* table : {"tcp", "tcp6"}) {
    auto text = ReadTextFile("/proc/" + std::to_string(pid) + "/net/" + table);
    std::istringstream lines(text ? *text : std::string());
    std::string line;
    std::getline(lines, line);  // the header
    while (std::getline(lines, line)) {
      std::istringstream fields(line);
      std::string sl, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> sl >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      if (state == "0A" && local.ends_with(hex_port)) inodes.insert(inode);
    }
  }
  return inodes;
}

}  // namespace

std::string NetnsFixture::Probe() {
  static const std::string reason = ProbeOnce();
  return reason;
}

Result<std::unique_ptr<NetnsFixture>> NetnsFixture::Create(const NetnsOptions& options) {
  if (FindIp().empty()) return Fail(ErrorCode::kNotFound, "iproute2's ip command is not installed");
  RemoveLeftovers();
  static std::atomic<int> counter{0};
  const int n = counter++;
  const std::string pid = std::to_string(::getpid());
  const std::string base = kNamePrefix + pid + "-" + std::to_string(n);
  std::unique_ptr<NetnsFixture> netns(new NetnsFixture(base + "-a", base + "-b", options.subnet));
  // Interface names have at most 15 characters; they need only be unique
  // within their (fresh) namespace, but a unique name costs nothing.
  const std::string veth = "mp" + std::to_string(::getpid() % 100000) + "x" + std::to_string(n);
  if (auto ok = netns->Build(veth + "a", veth + "b"); !ok) return Fail(ok.error());
  return netns;
}

Result<void> NetnsFixture::Build(const std::string& veth_a, const std::string& veth_b) {
  using Args = std::vector<std::string>;
  for (const Args& args :
       {Args{"netns", "add", name_a_}, Args{"netns", "add", name_b_},
        Args{"link", "add", veth_a, "netns", name_a_, "type", "veth", "peer", "name", veth_b,
             "netns", name_b_},
        Args{"-n", name_a_, "addr", "add", address(Side::kA) + "/24", "dev", veth_a},
        Args{"-n", name_b_, "addr", "add", address(Side::kB) + "/24", "dev", veth_b},
        Args{"-n", name_a_, "link", "set", "lo", "up"},
        Args{"-n", name_b_, "link", "set", "lo", "up"},
        Args{"-n", name_a_, "link", "set", veth_a, "up"},
        Args{"-n", name_b_, "link", "set", veth_b, "up"}}) {
    if (auto ok = Ip(args); !ok) return ok;
  }
  return {};
}

NetnsFixture::~NetnsFixture() {
  // Deleting a namespace that was never made (a failed Build) fails quietly.
  DeleteNamespace(name_a_);
  DeleteNamespace(name_b_);
}

std::string NetnsFixture::address(Side side) const {
  return subnet_ + (side == Side::kA ? ".1" : ".2");
}

std::vector<std::string> NetnsFixture::Command(
    Side side, const std::vector<std::string>& argv,
    const std::map<std::string, std::string>& env) const {
  std::vector<std::string> out = {FindIp(), "netns", "exec", name(side), kEnv};
  for (const auto& [key, value] : env) out.push_back(key + "=" + value);
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

CommandResult NetnsFixture::Run(Side side, const std::vector<std::string>& argv,
                                const std::map<std::string, std::string>& env,
                                std::chrono::milliseconds timeout) const {
  return RunCommand(Command(side, argv, env), {}, timeout);
}

bool ListensOnTcpPort(pid_t pid, uint16_t port) { return !ListenerInodes(pid, port).empty(); }

bool HoldsTcpListener(pid_t pid, uint16_t port) {
  const std::set<std::string> inodes = ListenerInodes(pid, port);
  for (const std::string& target : DescriptorTargetsOfAllThreads(pid)) {
    if (!target.starts_with("socket:[")) continue;
    if (inodes.contains(target.substr(8, target.size() - 9))) return true;
  }
  return false;
}

}  // namespace memprof::integration
