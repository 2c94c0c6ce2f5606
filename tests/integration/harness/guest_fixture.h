#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_GUEST_FIXTURE_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_GUEST_FIXTURE_H_

// What the "safe guest" tests (docs/contract.md rule 9) share: a look at a
// process through /proc (its descriptors, threads, signal masks and mapped
// libraries), the line protocol the guest-host programs of tests/testprogs
// serve over TCP, and a fixture with `list --json` and stdout helpers.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "tests/integration/harness/integration_fixture.h"

namespace memprof::integration {

// /proc/<pid>/fd: descriptor number -> what it points to ("socket:[123]",
// "anon_inode:[eventfd]", a path). Empty if the process is gone.
std::map<int, std::string> ReadFdTargets(pid_t pid);

// The "flags:" of /proc/<pid>/fdinfo/<fd> (octal open flags); nullopt if the
// descriptor is gone.
std::optional<unsigned> ReadFdFlags(pid_t pid, int fd);

// One thread of a process, from /proc/<pid>/task/<tid>/{comm,status}.
struct ThreadInfo {
  pid_t tid = 0;
  std::string comm;      // without the newline
  uint64_t sig_blk = 0;  // "SigBlk:" (bit N-1 set: signal N blocked)
};
std::vector<ThreadInfo> ReadThreads(pid_t pid);

// Whether a thread with this SigBlk mask blocks every signal that can be
// blocked: all of 1..64 except SIGKILL and SIGSTOP (the kernel never blocks
// them) and glibc's two internal ones, 32 and 33 (pthread_sigmask never
// blocks them).
bool BlocksAllSignals(uint64_t sig_blk);

// A process-wide mask line of /proc/<pid>/status ("SigCgt", "SigIgn").
std::optional<uint64_t> ReadSignalMask(pid_t pid, const std::string& field);

// The file names (basenames) of the shared libraries mapped into the process,
// from /proc/<pid>/maps, sorted and without duplicates.
std::set<std::string> MappedLibraries(pid_t pid);

// Those of `libraries` that belong to gRPC, protobuf, abseil or OpenSSL: what
// an idle agent must not map (docs/contract.md rule 9).
std::vector<std::string> HeavyLibraries(const std::set<std::string>& libraries);

// One request of the guest hosts' line protocol: connects to 127.0.0.1:port,
// sends `line` and a newline, and returns the reply line (without the
// newline). Each step has `timeout`. A failure says what went wrong.
[[nodiscard]] Result<std::string> TcpRequest(uint16_t port, const std::string& line,
                                             std::chrono::milliseconds timeout);

// The end-to-end fixture of the guest tests.
class GuestTest : public IntegrationTest {
 protected:
  std::string SocketOf(pid_t pid) const;
  // The names in the socket directory that are agent sockets ("<pid>.sock").
  std::vector<std::string> SocketNames() const;
  std::string SocketName(pid_t pid) const { return std::to_string(pid) + ".sock"; }

  // `memprofctl list --json`: its "targets" (an empty array, and a recorded
  // failure, if the command fails).
  nlohmann::json ListTargets();
  // The entry of `pid` in ListTargets()' array; nullopt if it is not there.
  static std::optional<nlohmann::json> FindTarget(const nlohmann::json& targets, pid_t pid);
  // entry[key], or the string "<no KEY field>" when there is none (without
  // adding it, as operator[] would).
  static nlohmann::json Field(const nlohmann::json& entry, const std::string& key);
  // The pids in ListTargets()' array, sorted.
  static std::vector<pid_t> ListedPids(const nlohmann::json& targets);

  // Every match of `pattern` in the target's stdout so far: the capture groups
  // of each match (group 1 first).
  static std::vector<std::vector<std::string>> StdoutMatches(TargetProcess& target,
                                                             const std::regex& pattern);
  // Waits until the target's stdout holds `count` matches of `pattern`;
  // returns them all (a failure with the target's output is recorded if they
  // do not come within `timeout`).
  static std::vector<std::vector<std::string>> AwaitStdout(
      TargetProcess& target, const std::regex& pattern, size_t count = 1,
      std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // `status --pid <pid> --json` succeeds and names `pid`.
  void ExpectServed(pid_t pid);

  // `memprofctl dump` of `pid` and `memprofctl report` of it, until the report
  // names `function` or `timeout` passes (sampling is random). Returns the
  // last report, or why a dump failed (then it stops at once).
  std::string DumpUntilReportNames(pid_t pid, const std::string& function,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(60));
};

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_GUEST_FIXTURE_H_
