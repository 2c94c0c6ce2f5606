#ifndef MEMPROF_TESTS_CLI_TESTING_CLI_TEST_UTIL_H_
#define MEMPROF_TESTS_CLI_TESTING_CLI_TEST_UTIL_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/fd.h"
#include "tests/support/files.h"
#include "tests/support/socket_files.h"
#include "tests/support/temp_dir.h"

namespace memprof::cli::testing {

// What every test folder shares (tests/support): a private directory under
// /tmp that is removed with its contents, reading files, and Unix socket
// files nobody listens on (MakeSocketFile) or nobody answers (ListenOn).
using test_support::FileExists;
using test_support::ListenOn;
using test_support::MakeSocketFile;
using test_support::ReadFile;
using test_support::TempDir;

// mkdir -p.
void MakeDirs(const std::string& path);
void WriteFile(const std::string& path, const std::string& contents);

// A fake /proc/<pid> (status and cmdline) under `proc_root`.
void MakeProcEntry(const std::string& proc_root, pid_t pid, const std::string& name,
                   const std::vector<pid_t>& ns_pids = {}, uid_t uid = 1000,
                   const std::vector<std::string>& cmdline = {});

// A fake /proc/<pid>/stat (parent `ppid`, started `start_ticks` clock ticks
// after boot) and a fake /proc/stat with boot time `btime`, under `proc_root`.
void MakeProcStat(const std::string& proc_root, pid_t pid, pid_t ppid, uint64_t start_ticks = 0);
void MakeProcBootTime(const std::string& proc_root, int64_t btime);

// The later of the mtime and ctime of `path`, in whole seconds (rounded down).
int64_t ChangedSeconds(const std::string& path);

}  // namespace memprof::cli::testing

#endif  // MEMPROF_TESTS_CLI_TESTING_CLI_TEST_UTIL_H_
