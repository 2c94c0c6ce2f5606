#include "tests/integration/harness/memory_cgroup.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/cgroup_memory.h"
#include "common/text_file.h"

namespace memprof::integration {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

Result<void> WriteValue(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  if (!out) {
    return Fail(ErrorCode::kInternal, "cannot write '" + value + "' to " + path + ": " +
                                          std::strerror(errno));
  }
  return {};
}

bool HasWord(const std::string& text, const std::string& word) {
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (w == word) return true;
  }
  return false;
}

// A name of its own per test process and cgroup.
std::string UniqueName() {
  static std::atomic<int> next{0};
  return "memprof-it-" + std::to_string(::getpid()) + "-" + std::to_string(next++);
}

std::string Join(const std::string& parent, const std::string& name) {
  return parent == "/" ? "/" + name : parent + "/" + name;
}

Result<CgroupMount> FindMount(int version) {
  auto mountinfo = ReadTextFile("/proc/self/mountinfo");
  if (!mountinfo) return Fail(mountinfo.error());
  for (const CgroupMount& mount : ParseCgroupMounts(*mountinfo)) {
    if (mount.version != version) continue;
    if (version == 1) {
      for (const auto& c : mount.controllers) {
        if (c == "memory") return mount;
      }
      continue;
    }
    auto controllers = ReadTextFile(mount.mount_point + "/cgroup.controllers");
    if (controllers && HasWord(*controllers, "memory")) return mount;
  }
  return Fail(ErrorCode::kNotFound, "no cgroup v" + std::to_string(version) +
                                        " hierarchy with the memory controller is mounted");
}

// Version 2: the root must hand the memory controller to its children.
Result<void> DelegateMemory(const CgroupMount& mount) {
  const std::string control = mount.mount_point + "/cgroup.subtree_control";
  auto enabled = ReadTextFile(control);
  if (enabled && HasWord(*enabled, "memory")) return {};
  return WriteValue(control, "+memory");
}

// This process's cgroup in the version 1 memory hierarchy.
Result<std::string> OwnMemoryCgroup() {
  auto cgroups = ReadTextFile("/proc/self/cgroup");
  if (!cgroups) return Fail(cgroups.error());
  for (const auto& m : ParseCgroupMemberships(*cgroups)) {
    for (const auto& c : m.controllers) {
      if (c == "memory") return m.path;
    }
  }
  return Fail(ErrorCode::kNotFound, "this process is in no cgroup v1 memory hierarchy");
}

Result<void> SetLimit(int version, const std::string& dir, uint64_t limit) {
  const std::string bytes = std::to_string(limit);
  if (version == 2) {
    if (auto ok = WriteValue(dir + "/memory.max", bytes); !ok) return ok;
    struct stat st{};
    if (::stat((dir + "/memory.swap.max").c_str(), &st) == 0) {
      return WriteValue(dir + "/memory.swap.max", "0");
    }
    return {};
  }
  struct stat st{};
  if (::stat((dir + "/memory.memsw.limit_in_bytes").c_str(), &st) != 0) {
    if (auto ok = WriteValue(dir + "/memory.limit_in_bytes", bytes); !ok) return ok;
    return WriteValue(dir + "/memory.swappiness", "0");
  }
  // memory+swap may never be below memory alone: a lower limit goes to
  // memory first, a higher one (which memory refuses) to memsw first.
  if (WriteValue(dir + "/memory.limit_in_bytes", bytes)) {
    return WriteValue(dir + "/memory.memsw.limit_in_bytes", bytes);
  }
  if (auto ok = WriteValue(dir + "/memory.memsw.limit_in_bytes", bytes); !ok) return ok;
  return WriteValue(dir + "/memory.limit_in_bytes", bytes);
}

uint64_t Field(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  for (std::string key; lines >> key;) {
    uint64_t value = 0;
    if (!(lines >> value)) return 0;
    if (key == name) return value;
  }
  return 0;
}

}  // namespace

Result<std::unique_ptr<MemoryCgroup>> MemoryCgroup::Create(int version, uint64_t limit_bytes) {
  if (::geteuid() != 0) return Fail(ErrorCode::kPermissionDenied, "making a cgroup needs root");
  auto mount = FindMount(version);
  if (!mount) return Fail(mount.error());
  std::string parent = mount->root;
  if (version == 2) {
    if (auto ok = DelegateMemory(*mount); !ok) return Fail(ok.error());
  } else {
    auto own = OwnMemoryCgroup();
    if (!own) return Fail(own.error());
    parent = *own;
  }
  const std::string path = Join(parent, UniqueName());
  const std::string directory = CgroupDirectory(*mount, path);
  if (::mkdir(directory.c_str(), 0755) != 0) {
    return Fail(ErrorCode::kInternal, "cannot make " + directory + ": " + std::strerror(errno));
  }
  std::unique_ptr<MemoryCgroup> cgroup(new MemoryCgroup(version, directory, path, limit_bytes));
  if (auto ok = SetLimit(version, directory, limit_bytes); !ok) return Fail(ok.error());
  return cgroup;
}

Result<void> MemoryCgroup::SetLimitBytes(uint64_t limit_bytes) {
  if (auto ok = SetLimit(version_, directory_, limit_bytes); !ok) return ok;
  limit_bytes_ = limit_bytes;
  return {};
}

MemoryCgroup::~MemoryCgroup() {
  const auto deadline = steady_clock::now() + std::chrono::seconds(10);
  while (::rmdir(directory_.c_str()) != 0 && errno == EBUSY && steady_clock::now() < deadline) {
    auto procs = ReadTextFile(directory_ + "/cgroup.procs");
    std::istringstream pids(procs ? *procs : std::string());
    for (pid_t pid; pids >> pid;) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(milliseconds(20));
  }
}

Result<void> MemoryCgroup::Add(pid_t pid) {
  return WriteValue(directory_ + "/cgroup.procs", std::to_string(pid));
}

uint64_t MemoryCgroup::OomKills() const {
  auto text = ReadTextFile(directory_ + (version_ == 2 ? "/memory.events" : "/memory.oom_control"));
  return text ? Field(*text, "oom_kill") : 0;
}

}  // namespace memprof::integration
