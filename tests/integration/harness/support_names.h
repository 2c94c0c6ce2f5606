#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_SUPPORT_NAMES_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_SUPPORT_NAMES_H_

// The helpers of tests/support that the harness and the end-to-end tests use
// everywhere, by their short names in memprof::integration: one list here
// instead of a block of using-declarations in every test.
#include "tests/support/command_runner.h"
#include "tests/support/files.h"
#include "tests/support/socket_files.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {

using test_support::CommandResult;
using test_support::DirectoryEntries;
using test_support::ExitStatus;
using test_support::FileExists;
using test_support::JoinArgv;
using test_support::ListenOn;
using test_support::MakeSocketFile;
using test_support::Gunzipped;
using test_support::ReadFile;
using test_support::RunCommand;
using test_support::SpawnOptions;
using test_support::Subprocess;
using test_support::TempDir;
using test_support::WaitUntil;
using test_support::WriteFile;

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_SUPPORT_NAMES_H_
