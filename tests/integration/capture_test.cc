// Peak capture: `activate --capture-growth` arms the agent to take heap
// profiles by itself at new high-water marks. spike_target allocates 300 MiB
// in SpikeHold300MiB on command, holds it two seconds and frees it; nobody
// dumps meanwhile. Afterwards `dump --captured` must fetch captures whose
// largest names the spike, while a normal dump taken now no longer shows it.
// The fixture kills the target and removes the directory, also on failure.
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kSpikeTarget = MEMPROF_IT_SPIKE_TARGET;
constexpr const char* kSpikeFunction = "SpikeHold300MiB";

class CaptureTest : public IntegrationTest {
 protected:
  // Profiling enabled but inactive at start-up, sampling every 512 KiB on
  // average: each 1 MiB block of the spike is sampled with p = 0.86, plenty
  // for a 300-block total.
  TargetProcess* StartSpikeTarget() {
    TargetOptions options;
    options.argv = {kSpikeTarget};
    options.env = {{"LD_PRELOAD", kAgentPreload},
                   {"MALLOC_CONF", "prof:true,prof_active:false,lg_prof_sample:19"}};
    options.stdin_pipe = true;
    return Start(options);
  }

  // The spike where the allocator cannot sample: memprof's sampler serves.
  TargetProcess* StartUnsampledSpikeTarget(const char* binary) {
    TargetOptions options;
    options.argv = {binary};
    options.env = {{"LD_PRELOAD", kAgentPreload}};
    options.stdin_pipe = true;
    return Start(options);
  }

  // The flat in-use bytes `report` gives `function` in `heap_file`; 0 when
  // the function is not in the report.
  double FlatBytes(const std::string& heap_file, const std::string& function) {
    CommandResult r = Cli({"report", "--format", "json", heap_file});
    EXPECT_EQ(r.exit_code, 0) << r;
    const json report = ParseJsonOutput(r);
    for (const auto& row : report.value("functions", json::array())) {
      if (row.value("name", "") == function) return row.value("flat", 0.0);
    }
    return 0;
  }

  // Descriptors of the target that are the agent's in-memory dump files.
  int MemfdDumps(pid_t pid) {
    int count = 0;
    for (const std::string& link : DescriptorTargetsOfAllThreads(pid)) {
      if (link.find("memfd:memprof-heap-dump") != std::string::npos) ++count;
    }
    return count;
  }
};

TEST_F(CaptureTest, ASpikeThatIsOverIsFoundInTheCaptures) {
  TargetProcess* target = StartSpikeTarget();
  ASSERT_NE(target, nullptr);
  CommandResult armed =
      CliFor(*target, "activate", {"--capture-growth", "64MiB", "--keep", "4"});
  ASSERT_EQ(armed.exit_code, 0) << armed;
  EXPECT_NE(armed.out.find("peak capture armed"), std::string::npos) << armed;
  const json before = StatusJson(*target)["capture"];
  EXPECT_EQ(before["armed"], true);
  EXPECT_EQ(before["growth_bytes"], 64u << 20);
  EXPECT_EQ(before["keep"], 4);
  EXPECT_TRUE(before["held"].empty());

  ASSERT_TRUE(target->process().WriteStdin("spike\n"));
  json capture;
  const bool over = test_support::WaitUntil(
      [&] {
        capture = StatusJson(*target)["capture"];
        return target->process().StdoutText().find("freed") != std::string::npos &&
               !capture["held"].empty();
      },
      milliseconds(60000), milliseconds(200));
  ASSERT_TRUE(over) << "captures: " << capture.dump() << "\ntarget stdout: "
                    << target->process().StdoutText();
  EXPECT_LE(capture["held"].size(), 4u);
  // In the agent's memory, not on disk: one memfd per capture held.
  EXPECT_GE(MemfdDumps(target->pid()), static_cast<int>(capture["held"].size()));

  const std::string out_dir = dir().File("captures");
  std::filesystem::create_directory(out_dir);
  CommandResult fetched = CliFor(*target, "dump", {"--captured", "--out-dir", out_dir, "--json"});
  ASSERT_EQ(fetched.exit_code, 0) << fetched;
  const std::string listing = dir().File("captured.json");
  ASSERT_TRUE(WriteFile(listing, fetched.out));
  CommandResult valid = RunCommand(
      {MEMPROF_IT_PYTHON3, MEMPROF_IT_JSON_VALIDATOR, MEMPROF_IT_DUMP_CAPTURED_SCHEMA, listing}, {});
  EXPECT_EQ(valid.exit_code, 0) << fetched.out << valid;
  const json written = ParseJsonOutput(fetched);
  ASSERT_EQ(written["captures"].size(), capture["held"].size()) << fetched.out;
  json largest;
  for (const auto& c : written["captures"]) {
    EXPECT_TRUE(std::filesystem::exists(c["path"].get<std::string>())) << c.dump();
    EXPECT_NE(c["path"].get<std::string>().find(
                  "-capture" + std::to_string(c["sequence"].get<uint64_t>()) + "-"),
              std::string::npos);
    if (largest.is_null() || c["allocated_bytes"] > largest["allocated_bytes"]) largest = c;
  }
  const double spike = FlatBytes(largest["path"], kSpikeFunction);
  // Each capture raises the mark to what the watcher saw (every 100 ms), so
  // on a busy machine the captures come later in the climb and the last
  // step of 64 MiB may not be reached: 200 of the 300 MiB is still the spike
  // seen from inside, where a dump after it sees under 10 MiB.
  EXPECT_GE(spike, 200.0 * (1 << 20)) << largest.dump();

  const std::string now = dir().File("after.heap");
  CommandResult dumped = CliFor(*target, "dump", {"--out", now});
  ASSERT_EQ(dumped.exit_code, 0) << dumped;
  EXPECT_LT(FlatBytes(now, kSpikeFunction), 10.0 * (1 << 20));

  // deactivate disarms and keeps the captures.
  CommandResult off = CliFor(*target, "deactivate");
  ASSERT_EQ(off.exit_code, 0) << off;
  const json after = StatusJson(*target)["capture"];
  EXPECT_EQ(after["armed"], false);
  EXPECT_EQ(after["held"].size(), capture["held"].size());
}

// Where the allocator cannot sample (jemalloc without prof:true, glibc's
// malloc), memprof's own sampler takes the captures: the largest names the
// spike.
TEST_F(CaptureTest, MemprofsSamplerCapturesTheSpikeToo) {
  for (const char* binary : {kSpikeTarget, MEMPROF_IT_SPIKE_GLIBC_TARGET}) {
    SCOPED_TRACE(binary);
    TargetProcess* target = StartUnsampledSpikeTarget(binary);
    ASSERT_NE(target, nullptr);
    EXPECT_EQ(StatusJson(*target)["sampler"], "memprof");
    CommandResult armed =
        CliFor(*target, "activate", {"--capture-growth", "64MiB", "--keep", "4"});
    ASSERT_EQ(armed.exit_code, 0) << armed;
    ASSERT_TRUE(target->process().WriteStdin("spike\n"));
    json capture;
    ASSERT_TRUE(test_support::WaitUntil(
        [&] {
          capture = StatusJson(*target)["capture"];
          return target->process().StdoutText().find("freed") != std::string::npos &&
                 !capture["held"].empty();
        },
        milliseconds(60000), milliseconds(200)))
        << capture.dump();
    const std::string out_dir =
        dir().File(std::string("captures-") + (binary == kSpikeTarget ? "je" : "glibc"));
    std::filesystem::create_directory(out_dir);
    CommandResult fetched =
        CliFor(*target, "dump", {"--captured", "--out-dir", out_dir, "--json"});
    ASSERT_EQ(fetched.exit_code, 0) << fetched;
    const json written = ParseJsonOutput(fetched);
    json largest;
    for (const auto& c : written["captures"]) {
      if (largest.is_null() || c["allocated_bytes"] > largest["allocated_bytes"]) largest = c;
    }
    ASSERT_FALSE(largest.is_null()) << fetched.out;
    EXPECT_TRUE(ReadFile(largest["path"].get<std::string>()).starts_with("heap_v2/524288\n# memprof_sampler "));
    EXPECT_GE(FlatBytes(largest["path"], kSpikeFunction), 200.0 * (1 << 20)) << largest.dump();
    ASSERT_EQ(CliFor(*target, "deactivate").exit_code, 0);
    EXPECT_EQ(StatusJson(*target)["capture"]["armed"], false);
    ASSERT_TRUE(target->Terminate().has_value());
  }
}

// Every user-caused failure: its message and exit code, nothing on stdout.
// Input is checked before any agent is asked, so pid 1 (no agent) will do.
TEST_F(CaptureTest, BadCaptureOptionsAreUsageErrors) {
  const auto activate = [](std::vector<std::string> args) {
    args.insert(args.begin(), {"activate", "--pid", "1"});
    return args;
  };
  const std::string share =
      "a share of the memory limit must be a whole percentage from 1% to 99%, e.g. 90%";
  const std::string out_dir = dir().File("captures");
  std::filesystem::create_directory(out_dir);
  ExpectAll({
      {activate({"--capture-growth", "10KiB"}), 2,
       "a capture growth must be between 1 MiB and 1024 GiB"},
      {activate({"--capture-growth", "100MB"}), 2, "invalid size '100MB'"},
      {activate({"--capture-growth", "100MiB", "--keep", "17"}), 2,
       "invalid count '17': expected a whole number from 1 to 16"},
      {activate({"--capture-growth", "100MiB", "--keep", "0"}), 2,
       "invalid count '0': expected a whole number from 1 to 16"},
      {activate({"--capture-near-limit", "0"}), 2, "'0': " + share},
      {activate({"--capture-near-limit", "100%"}), 2, "'100%': " + share},
      {activate({"--capture-near-limit", "12.5%"}), 2, "'12.5%': " + share},
      {activate({"--capture-near-limit", "abc"}), 2, "'abc': " + share},
      {activate({"--keep", "4"}), 2,
       "--keep needs --capture-growth SIZE or --capture-near-limit PERCENT"},
      {{"dump", "--pid", "1", "--follow", "--out-dir", out_dir}, 2, "--follow requires --captured"},
  });
  EXPECT_TRUE(std::filesystem::is_empty(out_dir));
}

TEST_F(CaptureTest, DumpCapturedFailsClearlyWithoutCapturesOrDirectory) {
  TargetProcess* target = StartSpikeTarget();
  ASSERT_NE(target, nullptr);
  const std::string out_dir = dir().File("captures");
  std::filesystem::create_directory(out_dir);
  CommandResult unarmed = CliFor(*target, "dump", {"--captured", "--out-dir", out_dir});
  EXPECT_EQ(unarmed.exit_code, 5) << unarmed;
  EXPECT_NE(unarmed.err.find("holds no peak captures: peak capture is not armed; arm it first "
                             "with `memprofctl activate --pid " +
                             std::to_string(target->pid()) + " --capture-growth SIZE`"),
            std::string::npos)
      << unarmed;

  ASSERT_EQ(CliFor(*target, "activate", {"--capture-growth", "1GiB"}).exit_code, 0);
  CommandResult none_yet = CliFor(*target, "dump", {"--captured", "--out-dir", out_dir});
  EXPECT_EQ(none_yet.exit_code, 5) << none_yet;
  EXPECT_NE(none_yet.err.find("holds no peak captures yet: it takes one when allocated bytes "
                              "pass"),
            std::string::npos)
      << none_yet;

  const std::string missing = dir().File("no-such-dir");
  CommandResult no_dir = CliFor(*target, "dump", {"--captured", "--out-dir", missing});
  EXPECT_EQ(no_dir.exit_code, 2) << no_dir;
  EXPECT_NE(no_dir.err.find("--out-dir '" + missing + "' does not exist; create it first"),
            std::string::npos)
      << no_dir;

  CommandResult no_out = CliFor(*target, "dump", {"--captured"});
  EXPECT_EQ(no_out.exit_code, 2) << no_out;
  EXPECT_NE(no_out.err.find("--captured requires --out-dir"), std::string::npos) << no_out;
  EXPECT_TRUE(std::filesystem::is_empty(out_dir));
}

// --follow on a target that is neither armed nor holding a capture has
// nothing to wait for: it fails at once, as `dump --captured` does, and
// writes nothing.
TEST_F(CaptureTest, FollowFailsAtOnceWhenCaptureIsNotArmed) {
  TargetProcess* target = StartSpikeTarget();
  ASSERT_NE(target, nullptr);
  const std::string pid = std::to_string(target->pid());
  const std::string out_dir = dir().File("captures");
  std::filesystem::create_directory(out_dir);
  // Well under the 60 s default: a --follow that waits instead of failing
  // is a failure too.
  CommandResult r =
      Cli({"dump", "--pid", pid, "--captured", "--follow", "--out-dir", out_dir}, {}, seconds(20));
  const std::string not_armed =
      " holds no peak captures: peak capture is not armed; arm it first with `memprofctl "
      "activate --pid ";
  ExpectCliError(r, 5, "pid " + pid + not_armed + pid +
                           " --capture-growth SIZE` (e.g. 100MiB) or `--capture-near-limit "
                           "PERCENT` (e.g. 90%)");
  EXPECT_TRUE(std::filesystem::is_empty(out_dir));
  const json status = StatusJson(*target);
  EXPECT_EQ(status["capture"]["armed"], false);
  EXPECT_EQ(status["profiling_active"], false);
}

// --follow waits while capture is armed; a process that ends before any
// capture was written ends it with exit 3 and says so, leaving nothing.
TEST_F(CaptureTest, FollowSaysSoWhenTheProcessEndsBeforeAnyCapture) {
  TargetProcess* target = StartSpikeTarget();
  ASSERT_NE(target, nullptr);
  const std::string pid = std::to_string(target->pid());
  CommandResult armed = CliFor(*target, "activate", {"--capture-growth", "1GiB"});
  ASSERT_EQ(armed.exit_code, 0) << armed;
  const std::string out_dir = dir().File("captures");
  std::filesystem::create_directory(out_dir);
  std::unique_ptr<Subprocess> follow =
      SpawnCli({"dump", "--pid", pid, "--captured", "--follow", "--out-dir", out_dir});
  ASSERT_NE(follow, nullptr);
  // Following: it says so once it has the agent's first answer.
  ASSERT_TRUE(test_support::WaitUntil(
      [&] { return follow->StderrText().find("following its captures into") != std::string::npos; },
      seconds(10)))
      << follow->StderrText();
  target->process().Signal(SIGKILL);
  std::optional<ExitStatus> followed = follow->Wait(seconds(20));
  ASSERT_TRUE(followed.has_value()) << follow->StderrText();
  EXPECT_EQ(followed->exit_code, 3) << follow->StderrText();
  EXPECT_NE(follow->StderrText().find("pid " + pid + " ended; 0 captures written to " + out_dir),
            std::string::npos)
      << follow->StderrText();
  EXPECT_NE(follow->StderrText().find("pid " + pid + " took no capture before following ended; "
                                      "nothing was written to " + out_dir),
            std::string::npos)
      << follow->StderrText();
  EXPECT_TRUE(std::filesystem::is_empty(out_dir));
}

// `exporter --captures-dir`: the exporter keeps every agent's captures on
// disk as they are taken, with nobody running `dump --captured`; after the
// spike the largest one names the spike. A directory that is not there is a
// usage error before anything starts.
TEST_F(CaptureTest, TheExporterKeepsEveryCaptureOnDisk) {
  const std::string missing = dir().File("no-such-dir");
  ExpectCliError(Cli({"exporter", "--listen", "127.0.0.1:0", "--captures-dir", missing}), 2,
                 "--captures-dir '" + missing + "' does not exist; create it first (mkdir -p)");
  TargetProcess* target = StartSpikeTarget();
  ASSERT_NE(target, nullptr);
  CommandResult armed = CliFor(*target, "activate", {"--capture-growth", "64MiB"});
  ASSERT_EQ(armed.exit_code, 0) << armed;
  const std::string out_dir = dir().File("kept");
  std::filesystem::create_directory(out_dir);
  std::unique_ptr<Subprocess> exporter =
      SpawnCli({"exporter", "--listen", "127.0.0.1:0", "--captures-dir", out_dir});
  ASSERT_NE(exporter, nullptr);
  ASSERT_TRUE(test_support::WaitUntil(
      [&] { return exporter->StderrText().find("keeping every capture in") != std::string::npos; },
      seconds(30)))
      << exporter->StderrText();
  ASSERT_TRUE(target->process().WriteStdin("spike\n"));
  ASSERT_TRUE(test_support::WaitUntil(
      [&] { return target->process().StdoutText().find("freed") != std::string::npos; },
      seconds(60)));
  // Every capture the agent took is on disk (the exporter asks every 100 ms).
  std::string largest;
  ASSERT_TRUE(test_support::WaitUntil(
      [&] {
        const json capture = StatusJson(*target)["capture"];
        const auto files = test_support::DirectoryEntries(out_dir);
        if (capture["taken_total"] == 0 || files.size() != capture["taken_total"]) return false;
        largest = out_dir + "/" + files.back();
        return true;
      },
      seconds(30), milliseconds(200)))
      << exporter->StderrText();
  EXPECT_NE(exporter->StderrText().find("capture #1"), std::string::npos) << exporter->StderrText();
  double spike = 0;
  for (const std::string& file : test_support::DirectoryEntries(out_dir)) {
    spike = std::max(spike, FlatBytes(out_dir + "/" + file, kSpikeFunction));
  }
  EXPECT_GE(spike, 64.0 * (1 << 20)) << largest;
  exporter->Signal(SIGTERM);
  std::optional<ExitStatus> stopped = exporter->Wait(seconds(20));
  ASSERT_TRUE(stopped.has_value());
  EXPECT_EQ(stopped->exit_code, 0) << exporter->StderrText();
}

// Near-limit capture measures against a memory cgroup limit. Where none
// applies, the agent refuses before it activates anything, so profiling and
// capture stay as they were. Whether a limit applies depends on the machine
// (here the test processes' v1 memory cgroup says "unlimited"), so the test
// skips where one does.
TEST_F(CaptureTest, NearLimitCaptureWithoutAMemoryLimitChangesNothing) {
  TargetProcess* target = StartSpikeTarget();
  ASSERT_NE(target, nullptr);
  const json before = StatusJson(*target);
  ASSERT_TRUE(before.contains("memory_limit")) << before.dump();
  if (before["memory_limit"]["limit_bytes"] != 0) {
    GTEST_SKIP() << "a memory limit applies to the target on this machine: "
                 << before["memory_limit"].dump();
  }
  if (before["memory_limit_error"] != "") {
    GTEST_SKIP() << "the agent cannot read its memory cgroup on this machine: "
                 << before["memory_limit_error"].dump();
  }
  const std::string refused =
      "cannot arm near-limit capture: no memory limit applies to this process";
  ExpectCliError(CliFor(*target, "activate", {"--capture-near-limit", "90%"}), 5, refused);
  // Asked together with a growth, the growth is refused with it.
  ExpectCliError(CliFor(*target, "activate",
                        {"--capture-growth", "64MiB", "--capture-near-limit", "90", "--keep", "2"}),
                 5, refused);
  const json after = StatusJson(*target);
  EXPECT_EQ(after["profiling_active"], before["profiling_active"]);
  EXPECT_EQ(after["activation_generation"], before["activation_generation"]);
  EXPECT_EQ(after["capture"], before["capture"]);
  EXPECT_EQ(after["capture"]["armed"], false);
}

}  // namespace
}  // namespace memprof::integration
