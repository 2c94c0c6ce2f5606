#include "tests/cli/testing/cli_test_util.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace memprof::cli::testing {

void MakeDirs(const std::string& path) { std::filesystem::create_directories(path); }

void WriteFile(const std::string& path, const std::string& contents) {
  if (!test_support::WriteFile(path, contents)) throw std::runtime_error("cannot write " + path);
}

void MakeProcEntry(const std::string& proc_root, pid_t pid, const std::string& name,
                   const std::vector<pid_t>& ns_pids, uid_t uid,
                   const std::vector<std::string>& cmdline) {
  const std::string dir = proc_root + "/" + std::to_string(pid);
  MakeDirs(dir);
  std::string nspid = "NSpid:\t" + std::to_string(pid);
  for (pid_t p : ns_pids) nspid += "\t" + std::to_string(p);
  const std::string u = std::to_string(uid);
  WriteFile(dir + "/status", "Name:\t" + name + "\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t" +
                                 std::to_string(pid) + "\nPPid:\t1\nUid:\t" + u + "\t" + u + "\t" +
                                 u + "\t" + u + "\n" + nspid +
                                 "\nVmRSS:\t    1024 kB\nThreads:\t2\n");
  std::string args;
  for (const std::string& a : cmdline) args += a + '\0';
  WriteFile(dir + "/cmdline", args);
}

void MakeProcStat(const std::string& proc_root, pid_t pid, pid_t ppid, uint64_t start_ticks) {
  const std::string dir = proc_root + "/" + std::to_string(pid);
  MakeDirs(dir);
  // The shape of a real line: a comm with a space and a ')' in it, then
  // fields 3..22 (state, ppid, ..., starttime) and a few more.
  WriteFile(dir + "/stat", std::to_string(pid) + " (fake) name) S " + std::to_string(ppid) +
                               " 1 1 0 -1 4194304 130 0 0 0 0 0 0 0 20 0 1 0 " +
                               std::to_string(start_ticks) + " 2990080 417 0 0 0\n");
}

void MakeProcBootTime(const std::string& proc_root, int64_t btime) {
  MakeDirs(proc_root);
  WriteFile(proc_root + "/stat",
            "cpu  1 0 2 3 0 0 0 0 0 0\nctxt 10\nbtime " + std::to_string(btime) + "\n");
}

int64_t ChangedSeconds(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) throw std::runtime_error("lstat " + path);
  return std::max<int64_t>(st.st_mtim.tv_sec, st.st_ctim.tv_sec);
}

}  // namespace memprof::cli::testing
