#include "cli/attach/attach_check.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/attach/process_image.h"
#include "cli/launch/elf_inspector.h"
#include "common/agent_environment.h"
#include "common/proc_status.h"
#include "common/socket_path.h"

namespace memprof::cli {
namespace {

constexpr int kCapSysPtrace = 19;

std::string ReadAll(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// "Key:\tvalue" lines of /proc/PID/status.
std::map<std::string, std::string> StatusFields(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t value = line.find_first_not_of(" \t", colon + 1);
    fields[line.substr(0, colon)] = value == std::string::npos ? "" : line.substr(value);
  }
  return fields;
}

std::vector<uid_t> Uids(const std::string& field) {
  std::istringstream in(field);
  std::vector<uid_t> uids;
  uid_t uid = 0;
  while (in >> uid) uids.push_back(uid);
  return uids;
}

std::map<std::string, std::string> Environment(const std::string& text) {
  std::map<std::string, std::string> env;
  for (const std::string& entry : ParseCmdline(text)) {
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

bool IsDescendantOf(const std::string& proc_root, pid_t pid, pid_t ancestor) {
  for (int depth = 0; pid > 1 && depth < 1024; ++depth) {
    bool ok = false;
    auto status = ParseProcStatus(ReadAll(proc_root + "/" + std::to_string(pid) + "/status", ok));
    if (!ok || !status) return false;
    pid = status->ppid;
    if (pid == ancestor) return true;
  }
  return false;
}

// Whether a MALLOC_CONF-style text turns profiling on: its last prof:...
std::optional<bool> ProfFromConf(const std::string& conf) {
  std::optional<bool> prof;
  std::istringstream items(conf);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item == "prof:true") prof = true;
    if (item == "prof:false") prof = false;
  }
  return prof;
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

void FindAllocator(const std::string& proc_root, const std::vector<MappedFile>& files,
                   AttachCheck& check) {
  const std::string pid_dir = proc_root + "/" + std::to_string(check.pid);
  if (const MappedFile* je = FindMappedFile(files, "libjemalloc.so")) {
    check.allocator = AttachCheck::Allocator::kJemalloc;
    check.allocator_file = je->path;
  } else if (const MappedFile* tc = FindMappedFile(files, "libtcmalloc")) {
    check.allocator = AttachCheck::Allocator::kTcmalloc;
    check.allocator_file = tc->path;
  } else if (auto elf = InspectElf(pid_dir + "/exe"); elf && elf->defines_mallctl) {
    check.allocator = AttachCheck::Allocator::kJemalloc;
    check.allocator_file = files.empty() ? "the program" : files.front().path;
  }
  // Its own file, or the memfd an earlier attach brought it in.
  check.agent_loaded = FindMappedFile(files, "libmemprof_agent") != nullptr ||
                       FindMappedFile(files, "memfd:memprof-agent") != nullptr;
}

// gperftools' tcmalloc samples from start-up when TCMALLOC_SAMPLE_PARAMETER
// was set then (and non-zero), and only libtcmalloc has the sampler, not
// libtcmalloc_minimal.
void FindTcmallocSampling(const std::map<std::string, std::string>& env, AttachCheck& check) {
  if (check.allocator_file.find("libtcmalloc_minimal") != std::string::npos) {
    check.profiling_at_start = false;
    check.profiling_source = "libtcmalloc_minimal has no sampler";
    return;
  }
  const auto it = env.find("TCMALLOC_SAMPLE_PARAMETER");
  const bool sampling = it != env.end() && !it->second.empty() && it->second != "0";
  check.profiling_at_start = sampling;
  check.profiling_source = sampling ? "TCMALLOC_SAMPLE_PARAMETER=" + it->second +
                                          " in its environment"
                                    : "no TCMALLOC_SAMPLE_PARAMETER in its environment";
}

void FindProfiling(const std::string& pid_dir, const std::map<std::string, std::string>& env,
                   AttachCheck& check) {
  if (check.allocator == AttachCheck::Allocator::kTcmalloc) return FindTcmallocSampling(env, check);
  if (check.allocator != AttachCheck::Allocator::kJemalloc) return;
  if (auto it = env.find("MALLOC_CONF"); it != env.end()) {
    if (auto prof = ProfFromConf(it->second)) {
      check.profiling_at_start = prof;
      check.profiling_source = "MALLOC_CONF=" + it->second + " in its environment";
      return;
    }
  }
  char target[256] = {};
  const ssize_t n = ::readlink((pid_dir + "/root/etc/malloc.conf").c_str(), target, sizeof target - 1);
  if (n > 0) {
    if (auto prof = ProfFromConf(std::string(target, static_cast<size_t>(n)))) {
      check.profiling_at_start = prof;
      check.profiling_source = "/etc/malloc.conf -> " + std::string(target, static_cast<size_t>(n));
      return;
    }
  }
  if (!env.contains("MALLOC_CONF")) {
    check.profiling_at_start = false;
    check.profiling_source = "no MALLOC_CONF in its environment and no /etc/malloc.conf";
  }
}

}  // namespace

TracerIdentity CurrentTracer(const std::string& proc_root) {
  TracerIdentity tracer;
  tracer.uid = ::geteuid();
  bool ok = false;
  const auto fields = StatusFields(ReadAll(proc_root + "/self/status", ok));
  if (auto it = fields.find("CapEff"); it != fields.end()) {
    const uint64_t caps = std::stoull(it->second, nullptr, 16);
    tracer.cap_sys_ptrace = (caps >> kCapSysPtrace) & 1;
  }
  const std::string scope = ReadAll(proc_root + "/sys/kernel/yama/ptrace_scope", ok);
  tracer.yama_scope = ok ? std::atoi(scope.c_str()) : 0;
  return tracer;
}

std::optional<std::string> PtraceRefusal(const TracerIdentity& tracer,
                                         const std::vector<uid_t>& target_uids, bool dumpable,
                                         bool is_descendant) {
  if (tracer.yama_scope >= 3) {
    return "the kernel forbids ptrace to every process (kernel.yama.ptrace_scope = 3, which only "
           "a reboot undoes)";
  }
  if (tracer.cap_sys_ptrace) return std::nullopt;
  if (tracer.yama_scope == 2) {
    return "kernel.yama.ptrace_scope = 2 lets only a process with CAP_SYS_PTRACE attach; run "
           "memprofctl as root";
  }
  for (uid_t uid : target_uids) {
    if (uid != tracer.uid) {
      return "the process runs as another user (uid " + std::to_string(target_uids.front()) +
             ") and memprofctl has no CAP_SYS_PTRACE; run it as that user or as root";
    }
  }
  if (!dumpable) {
    return "the process changed its user or privileges since it started, so the kernel keeps it "
           "non-dumpable and only root may trace it; run memprofctl as root";
  }
  if (tracer.yama_scope == 1 && !is_descendant) {
    return "kernel.yama.ptrace_scope = 1 lets a user trace only its own descendants; run "
           "memprofctl as root (or set the sysctl to 0)";
  }
  return std::nullopt;
}

Result<AttachCheck> CheckForAttach(const std::string& proc_root, pid_t pid,
                                   const std::string& agent_path, const TracerIdentity& tracer) {
  AttachCheck check;
  check.pid = pid;
  const std::string pid_dir = proc_root + "/" + std::to_string(pid);
  bool ok = false;
  const auto status = StatusFields(ReadAll(pid_dir + "/status", ok));
  if (!ok || !status.contains("Uid")) {
    return Fail(ErrorCode::kNotFound, "no process with pid " + std::to_string(pid));
  }
  check.command = status.contains("Name") ? status.at("Name") : "";
  struct stat dir;
  const std::vector<uid_t> uids = Uids(status.at("Uid"));
  const bool dumpable = ::stat(pid_dir.c_str(), &dir) == 0 && (uids.size() < 2 || dir.st_uid == uids[1]);
  check.refusal = PtraceRefusal(tracer, {uids.begin(), uids.begin() + std::min<size_t>(3, uids.size())},
                                dumpable, IsDescendantOf(proc_root, pid, ::getpid()));
  auto files = ReadMappedFiles(proc_root, pid);
  const std::string environ_text = ReadAll(pid_dir + "/environ", ok);
  if (!files || !ok) {
    if (!check.refusal) check.refusal = "memprofctl may not read /proc/" + std::to_string(pid);
    return check;
  }
  const auto env = Environment(environ_text);
  FindAllocator(proc_root, *files, check);
  FindProfiling(pid_dir, env, check);
  if (auto it = env.find(kAgentSwitchEnv); it != env.end() && AgentSwitchedOff(it->second)) {
    check.agent_switched_off = true;
  }
  auto dir_it = env.find(kSocketDirEnv);
  check.socket_dir = SocketDirectoryFrom(dir_it != env.end() ? dir_it->second : "");
  check.agent_visible = SameFile(agent_path, pid_dir + "/root" + agent_path);
  return check;
}

namespace {

// Whether the allocator's own profiler will serve heap profiles: jemalloc's
// or tcmalloc's, enabled when the process started. Else memprof's sampler.
bool AllocatorSamples(const AttachCheck& check) {
  switch (check.allocator) {
    case AttachCheck::Allocator::kJemalloc: return check.profiling_at_start.value_or(true);
    case AttachCheck::Allocator::kTcmalloc: return check.profiling_at_start.value_or(false);
    case AttachCheck::Allocator::kGlibc: return false;
  }
  return false;
}

}  // namespace

AttachCapabilities CapabilitiesOf(const AttachCheck& check) {
  AttachCapabilities caps;
  caps.works = {"status", "stats", "doctor", "purge", "activate", "deactivate", "dump", "profile"};
  if (AllocatorSamples(check)) {
    caps.sampler = check.allocator == AttachCheck::Allocator::kTcmalloc ? "tcmalloc" : "jemalloc";
  } else {
    caps.sampler = "memprof";
  }
  // Allocation windows and peak captures work with jemalloc's profiler and
  // with memprof's sampler; a tcmalloc that samples by itself has neither.
  if (caps.sampler != "tcmalloc") {
    caps.works.push_back("profile --allocations");
    return caps;
  }
  caps.refused = {"profile --allocations", "activate --capture-near-limit/--capture-growth"};
  caps.refusal_reason =
      "allocation windows and peak captures need jemalloc's profiler or memprof's own sampler, "
      "and this tcmalloc samples by itself (" + check.profiling_source +
      "); restart it without TCMALLOC_SAMPLE_PARAMETER for memprof's sampler to serve them";
  return caps;
}

}  // namespace memprof::cli
