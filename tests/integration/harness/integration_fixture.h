#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_INTEGRATION_FIXTURE_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_INTEGRATION_FIXTURE_H_

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tests/integration/harness/support_names.h"
#include "tests/integration/harness/target_process.h"

namespace memprof::integration {

// The MALLOC_CONF a profiling-ready target starts with (docs/contract.md
// section 2, `memprofctl run`).
inline constexpr char kProfilingReadyConf[] = "prof:true,prof_active:false";

// How a jemalloc target gets its agent: the three ways docs/contract.md names.
enum class Shape {
  kLinked,     // linked_target: jemalloc + libmemprof_agent.so linked, memprof_agent_start()
  kPreloaded,  // plain_target (jemalloc) + LD_PRELOAD=libmemprof_agent.so + MALLOC_CONF
  kRunPlain,   // memprofctl run -- plain_target
  kRunGlibc,   // memprofctl run -- glibc_target (jemalloc preloaded by run)
};

struct ShapeInfo {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string binary;             // the program whose functions jeprof resolves
  std::string leak_function;      // allocates and never frees: its samples stay live
  std::string allocate_function;  // allocates steadily into a ring (its samples come and go)
};

ShapeInfo DescribeShape(Shape shape);

// One bad command line and what memprofctl must answer (docs/errors.md).
struct BadCall {
  std::vector<std::string> args;
  int exit_code;
  std::string message;  // a stable fragment of the one-line error
};
std::string ShapeName(const ::testing::TestParamInfo<Shape>& info);

// Base of the end-to-end tests: a private socket directory per test (so tests
// run in parallel), targets that are killed and reaped when the test ends, and
// helpers to run the real memprofctl against them.
class IntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override;

  const TempDir& dir() const { return *dir_; }
  std::string SocketDir() const { return dir_->path(); }

  // Starts a target with MEMPROF_SOCKET_DIR = this test's directory and waits
  // for its handshake (and its socket when expect_agent). Records a test
  // failure with the target's output and returns nullptr if that fails.
  TargetProcess* Start(TargetOptions options);
  TargetProcess* StartShape(Shape shape);

  // memprofctl ARGS with MEMPROF_SOCKET_DIR = this test's directory.
  CommandResult Cli(std::vector<std::string> args, std::map<std::string, std::string> env = {},
                    std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // memprofctl ARGS in the background, MEMPROF_SOCKET_DIR as for Cli (killed
  // and reaped when the returned object goes; nullptr and a failure if it
  // cannot be started).
  std::unique_ptr<Subprocess> SpawnCli(std::vector<std::string> args);
  // A preloaded many_stacks_target with 3000 deep stacks, every allocation
  // sampled: its dump is large enough (several MiB) to still be streaming
  // when a test interrupts it. Starting it takes a while (up to 120 s).
  TargetProcess* StartBigDumpTarget();
  // A process without an agent (glibc_target): only its handshake is awaited.
  TargetProcess* StartWithoutAgent();
  // memprofctl COMMAND --pid <target> ARGS...
  CommandResult CliFor(const TargetProcess& target, const std::string& command,
                       std::vector<std::string> args = {});
  // Runs every call (as Cli, with `env`) and checks its exit code and
  // message (ExpectCliError).
  void ExpectAll(const std::vector<BadCall>& calls,
                 const std::map<std::string, std::string>& env = {});

  // `status --json` of the target, parsed; a failure is recorded if it fails.
  nlohmann::json StatusJson(const TargetProcess& target);

  // `dump --out <path>` until `jeprof --text <binary> <dump>` names `function`
  // (sampling is random, so a sample may take a moment to land), within
  // `timeout`. Returns the last jeprof output.
  std::string DumpUntilJeprofNames(const TargetProcess& target, const std::string& binary,
                                   const std::string& function,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(60));

  // Entries of the test directory that are not agent sockets: where a failed
  // dump must leave nothing behind.
  std::vector<std::string> NonSocketEntries() const;

 private:
  std::optional<TempDir> dir_;
  std::vector<std::unique_ptr<TargetProcess>> targets_;  // destroyed before dir_
};

// A test run once per target shape: SetUp starts the shape's target, ready
// and serving, as target().
class ShapeTest : public IntegrationTest, public ::testing::WithParamInterface<Shape> {
 protected:
  void SetUp() override;

  TargetProcess& target() { return *target_; }
  const ShapeInfo& shape() const { return shape_; }

 private:
  ShapeInfo shape_;
  TargetProcess* target_ = nullptr;
};

// Parses stdout as JSON; records a failure (with the command) if it is not.
nlohmann::json ParseJsonOutput(const CommandResult& r);

// An error per the CLI contract: the exit code, nothing on stdout, and one
// "memprofctl: error: ..." message on stderr containing `substring`.
void ExpectCliError(const CommandResult& r, int exit_code, const std::string& substring);

// ReadFile, WriteFile and FileExists are tests/support's (support_names.h).
std::string Sha256Hex(const std::string& data);

// The wall clock in Unix milliseconds, as the agent reports window ends.
inline int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_INTEGRATION_FIXTURE_H_
