// memprofctl profile --allocations: what a real target allocated
// during a window, what of it was freed and after how long, what survived;
// read by `report` in every format and by the real pprof; and every failure
// a user can cause, with its message and exit code, and nothing left behind.
#include <signal.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/debian_tools.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kMixTarget[] = MEMPROF_IT_ALLOCATION_MIX_TARGET;
constexpr char kTcmallocTarget[] = MEMPROF_IT_TCMALLOC_TARGET;

class AllocationTest : public IntegrationTest {
 protected:
  // allocation_mix_target, profiling enabled but inactive: the window must
  // turn it on for itself.
  TargetProcess* StartMix(const std::string& malloc_conf = "prof:true,prof_active:false") {
    TargetOptions options;
    options.argv = {kMixTarget};
    options.env = {{"LD_PRELOAD", kAgentPreload}};
    if (!malloc_conf.empty()) options.env["MALLOC_CONF"] = malloc_conf;
    return Start(options);
  }

  std::vector<std::string> ProfileArgs(const TargetProcess& t, const std::string& duration,
                                       const std::string& out) {
    return {"profile", "--pid", std::to_string(t.pid()), "--duration", duration,
            "--allocations", "--out", out};
  }

  // Waits until the window has turned profiling on in `t`.
  bool AwaitWindowOpen(const TargetProcess& t) {
    return WaitUntil([&] { return StatusJson(t)["profiling_active"] == true; }, seconds(30),
                     milliseconds(20));
  }

  // Per function, the bytes of the collapsed stacks that contain it.
  static std::map<std::string, double> CollapsedBytes(const std::string& collapsed) {
    std::map<std::string, double> bytes;
    std::istringstream in(collapsed);
    std::string line;
    for (const char* f : {"churn_buffer", "leak_record", "cache_fill"}) bytes[f] = 0;
    while (std::getline(in, line)) {
      const size_t space = line.rfind(' ');
      if (space == std::string::npos) continue;
      const double value = std::stod(line.substr(space + 1));
      for (auto& [function, total] : bytes) {
        if (line.find(function) != std::string::npos) total += value;
      }
    }
    return bytes;
  }

  // The JSON `text` is valid by docs/schemas/<schema>.schema.json.
  void ExpectValid(const std::string& schema, const std::string& text) {
    const std::string file = dir().File(schema + ".json");
    ASSERT_TRUE(WriteFile(file, text));
    CommandResult r = RunCommand({MEMPROF_IT_PYTHON3, MEMPROF_IT_JSON_VALIDATOR,
                                  std::string(MEMPROF_IT_SCHEMA_DIR) + "/" + schema + ".schema.json",
                                  file},
                                 {});
    EXPECT_EQ(r.exit_code, 0) << schema << ":\n" << text << r;
    std::filesystem::remove(file);
  }

  static const json* Site(const json& report, const std::string& function) {
    for (const json& site : report["sites"]) {
      if (site["function"].get<std::string>().find(function) != std::string::npos) return &site;
    }
    return nullptr;
  }
};

// The acceptance test: the churn ranks first by bytes allocated and keeps
// nothing, living for milliseconds; the leak's allocations survive; the
// cache, allocated before the window, is not counted; pprof agrees.
TEST_F(AllocationTest, RanksTheChurnFirstKeepsTheLeakAndLeavesOutTheCache) {
  TargetProcess* t = StartMix();
  ASSERT_NE(t, nullptr);
  const std::string path = dir().File("mix.allocs");
  std::vector<std::string> args = ProfileArgs(*t, "3s", path);
  args.push_back("--json");
  CommandResult r = Cli(args);
  ASSERT_EQ(r.exit_code, 0) << r;
  json j = ParseJsonOutput(r);
  ExpectValid("profile-allocations", r.out);
  EXPECT_EQ(j["pid"], t->pid());
  EXPECT_EQ(j["path"], path);
  EXPECT_EQ(j["ended_by"], "duration") << j.dump(2);
  EXPECT_EQ(j["records_lost"], false);
  EXPECT_EQ(j["profiling_activated"], true);
  EXPECT_EQ(j["size_bytes"], ReadFile(path).size());
  EXPECT_TRUE(Gunzipped(ReadFile(path)).ends_with("\n--- end\n")) << "a whole gzip'd profile";
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false) << "the window put profiling back off";
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"mix.allocs"});

  // Ranked by bytes allocated (the default).
  CommandResult collapsed = Cli({"report", path, "--format", "collapsed"});
  ASSERT_EQ(collapsed.exit_code, 0) << collapsed;
  auto allocated = CollapsedBytes(collapsed.out);
  EXPECT_GT(allocated["churn_buffer"], 10 * allocated["leak_record"]) << collapsed.out;
  EXPECT_GT(allocated["leak_record"], 0) << collapsed.out;
  EXPECT_EQ(allocated["cache_fill"], 0) << "allocated before the window: " << collapsed.out;

  // Lifetimes: the churn keeps nothing and lives for milliseconds; the leak keeps everything.
  CommandResult lifetimes = Cli({"report", path, "--lifetimes", "--format", "json"});
  ASSERT_EQ(lifetimes.exit_code, 0) << lifetimes;
  json l = ParseJsonOutput(lifetimes);
  ExpectValid("report-lifetimes", lifetimes.out);
  EXPECT_EQ(l.value("schema_version", 0), 1);
  const json* churn = Site(l, "churn_buffer");
  const json* leak = Site(l, "leak_record");
  ASSERT_NE(churn, nullptr) << l.dump(2);
  ASSERT_NE(leak, nullptr) << l.dump(2);
  EXPECT_EQ(Site(l, "cache_fill"), nullptr) << l.dump(2);
  const double churn_allocated = (*churn)["allocated_bytes"].get<double>();
  EXPECT_GT(churn_allocated, 100.0 * 1024 * 1024) << "256 KiB a millisecond for 3 s";
  // A buffer allocated in the window's last tick may be freed after it.
  EXPECT_LE((*churn)["survived_bytes"].get<double>(), churn_allocated / 100) << churn->dump(2);
  ASSERT_TRUE((*churn)["lifetime_p90_ns"].is_number()) << churn->dump(2);
  EXPECT_LT((*churn)["lifetime_p90_ns"].get<double>(), 50e6) << churn->dump(2);
  EXPECT_GT((*churn)["allocated_objects"].get<double>(), 0);
  EXPECT_GT((*leak)["survived_bytes"].get<double>(), 0) << leak->dump(2);
  EXPECT_EQ((*leak)["freed_bytes"].get<double>(), 0) << leak->dump(2);
  EXPECT_EQ((*leak)["survived_bytes"], (*leak)["allocated_bytes"]) << leak->dump(2);

  // The real pprof reads both sample types and agrees.
  std::string pprof;
  ASSERT_TRUE(test_support::CanRun(test_support::Pprof(MEMPROF_IT_PPROF_TOOL), &pprof));
  const std::string pb = dir().File("mix.pb.gz");
  ASSERT_EQ(Cli({"report", path, "--format", "pprof", "--out", pb}).exit_code, 0);
  auto top = [&](const std::string& index) {
    CommandResult p = RunCommand({pprof, "-top", "-sample_index=" + index, pb}, {});
    EXPECT_EQ(p.exit_code, 0) << p;
    // The first row after the header is the largest flat entry.
    const size_t header = p.out.find("flat%");
    const size_t row = p.out.find('\n', header);
    return row == std::string::npos ? std::string() : p.out.substr(row + 1, p.out.find('\n', row + 1) - row);
  };
  EXPECT_NE(top("alloc_space").find("churn_buffer"), std::string::npos);
  EXPECT_NE(top("inuse_space").find("leak_record"), std::string::npos);
}

// jemalloc started without prof:true cannot record: memprof's own sampler
// serves the window instead, with the same profile, and the same ranking.
// jemalloc writes thread names into its records as they are: a thread named
// with a quote and a backslash (here the main thread, named after the
// program, with prof_sys_thread_name) broke the profile's JSON and report
// refused it. The agent escapes them as it writes the profile.
TEST_F(AllocationTest, AThreadNameWithQuotesAndBackslashesKeepsTheProfileReadable) {
  const std::string program = dir().File("q\"t\\mix");
  std::filesystem::create_symlink(kMixTarget, program);
  TargetOptions options;
  options.argv = {program};
  options.env = {{"LD_PRELOAD", kAgentPreload},
                 {"MALLOC_CONF", "prof:true,prof_active:false,prof_sys_thread_name:true"}};
  TargetProcess* t = Start(options);
  ASSERT_NE(t, nullptr);
  const std::string path = dir().File("named.allocs");
  CommandResult r = Cli(ProfileArgs(*t, "2s", path));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(Gunzipped(ReadFile(path)).find(R"("alloc_thread_name":"q\"t\\mix")"), std::string::npos)
      << "the name, escaped";
  CommandResult report = Cli({"report", path, "--lifetimes", "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report;
  EXPECT_FALSE(ParseJsonOutput(report)["sites"].empty());
}

TEST_F(AllocationTest, AWindowOnJemallocWithoutProfilingIsServedByMemprofsSampler) {
  TargetProcess* t = StartMix("");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(StatusJson(*t)["sampler"], "memprof");
  const std::string path = dir().File("sampler.allocs");
  CommandResult r = Cli(ProfileArgs(*t, "2s", path));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(Gunzipped(ReadFile(path)).find("\nclock: monotonic\n"), std::string::npos);
  CommandResult collapsed = Cli({"report", path, "--format", "collapsed"});
  ASSERT_EQ(collapsed.exit_code, 0) << collapsed;
  std::map<std::string, double> allocated = CollapsedBytes(collapsed.out);
  EXPECT_GT(allocated["churn_buffer"], 10 * allocated["leak_record"]) << collapsed.out;
  EXPECT_GT(allocated["leak_record"], 0) << collapsed.out;
  EXPECT_EQ(allocated["cache_fill"], 0) << "allocated before the window: " << collapsed.out;
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false) << "the window put sampling back off";
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"sampler.allocs"});
}

TEST_F(AllocationTest, ATcmallocTargetIsRefusedWithTheReason) {
  TargetOptions options;
  options.argv = {kTcmallocTarget};
  options.env["LD_PRELOAD"] = kAgentPreload;
  options.env["TCMALLOC_SAMPLE_PARAMETER"] = "65536";
  TargetProcess* t = Start(options);
  ASSERT_NE(t, nullptr);
  CommandResult r = Cli(ProfileArgs(*t, "2s", dir().File("tc.allocs")));
  EXPECT_EQ(r.exit_code, 5) << r;
  EXPECT_NE(r.err.find("allocation profiles need jemalloc"), std::string::npos) << r;
  EXPECT_NE(r.err.find("tcmalloc"), std::string::npos) << r;
  EXPECT_TRUE(NonSocketEntries().empty());
}

// One window at a time: the second is refused at once, saying when the
// first ends; the first is not disturbed.
TEST_F(AllocationTest, ASecondWindowIsRefusedWhileOneIsOpen) {
  TargetProcess* t = StartMix();
  ASSERT_NE(t, nullptr);
  const std::string first = dir().File("first.allocs");
  auto running = SpawnCli(ProfileArgs(*t, "4s", first));
  ASSERT_NE(running, nullptr);
  ASSERT_TRUE(AwaitWindowOpen(*t));
  json window = StatusJson(*t)["allocation_window"];
  EXPECT_EQ(window["open_window"], 1) << window.dump(2);
  EXPECT_EQ(window["record_bound"], 100000) << window.dump(2);
  CommandResult second = Cli(ProfileArgs(*t, "2s", dir().File("second.allocs")));
  EXPECT_EQ(second.exit_code, 5) << second;
  EXPECT_NE(second.err.find("is already open in this process (it ends in "), std::string::npos)
      << second;
  auto status = running->Wait(seconds(30));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->exit_code, 0);
  EXPECT_TRUE(Gunzipped(ReadFile(first)).ends_with("\n--- end\n"));
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"first.allocs"});
}

TEST_F(AllocationTest, ATargetThatExitsMidWindowWritesNothing) {
  TargetProcess* t = StartMix();
  ASSERT_NE(t, nullptr);
  const std::string path = dir().File("gone.allocs");
  auto running = SpawnCli(ProfileArgs(*t, "30s", path));
  ASSERT_NE(running, nullptr);
  ASSERT_TRUE(AwaitWindowOpen(*t));
  ASSERT_TRUE(t->Terminate().has_value());
  auto status = running->Wait(seconds(20));
  ASSERT_TRUE(status.has_value()) << "memprofctl did not notice the exit";
  EXPECT_EQ(status->exit_code, 3);
  EXPECT_NE(running->StderrText().find("exited during the allocation window"), std::string::npos)
      << running->StderrText();
  EXPECT_TRUE(NonSocketEntries().empty()) << "no file, no temp file";
}

// Near its record bound the agent ends the window by itself, and memprofctl
// fetches it then rather than at the end of the duration.
TEST_F(AllocationTest, AWindowNearItsBoundEndsEarlyAndSaysSo) {
  TargetProcess* t = StartMix();
  ASSERT_NE(t, nullptr);
  const std::string path = dir().File("bound.allocs");
  std::vector<std::string> args = ProfileArgs(*t, "120s", path);
  args.insert(args.end(), {"--record-bound", "300"});
  CommandResult r = Cli(args, {}, seconds(100));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.err.find("the window ended early: its records neared the bound of 300"),
            std::string::npos)
      << r;
  EXPECT_NE(Gunzipped(ReadFile(path)).find("\nended_by: bound\n"), std::string::npos);
  json window = StatusJson(*t)["allocation_window"];
  EXPECT_EQ(window["open_window"], 0) << window.dump(2);
  EXPECT_EQ(window["held_profile"], 0) << "fetched: " << window.dump(2);
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false);
}

TEST_F(AllocationTest, RecordBoundIsAUsageErrorWithoutAllocationsOrOutOfRange) {
  TargetProcess* t = StartMix();
  ASSERT_NE(t, nullptr);
  const std::string pid = std::to_string(t->pid());
  const std::string out = dir().File("x.allocs");
  CommandResult alone =
      Cli({"profile", "--pid", pid, "--duration", "1s", "--out", out, "--record-bound", "5"});
  EXPECT_EQ(alone.exit_code, 2) << alone;
  EXPECT_NE(alone.err.find("--record-bound requires --allocations"), std::string::npos) << alone;
  CommandResult zero = Cli({"profile", "--pid", pid, "--duration", "1s", "--out", out,
                            "--allocations", "--record-bound", "0"});
  EXPECT_EQ(zero.exit_code, 2) << zero;
  EXPECT_NE(zero.err.find("--record-bound"), std::string::npos) << zero;
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false) << "nothing was switched on";
  EXPECT_TRUE(NonSocketEntries().empty());
}

// The first interrupt ends the window and still writes the profile.
TEST_F(AllocationTest, AnInterruptEndsTheWindowEarlyAndWritesTheProfile) {
  TargetProcess* t = StartMix();
  ASSERT_NE(t, nullptr);
  const std::string path = dir().File("early.allocs");
  std::vector<std::string> args = ProfileArgs(*t, "60s", path);
  args.push_back("--json");
  auto running = SpawnCli(args);
  ASSERT_NE(running, nullptr);
  ASSERT_TRUE(AwaitWindowOpen(*t));
  ASSERT_EQ(::kill(running->pid(), SIGINT), 0);
  auto status = running->Wait(seconds(20));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->exit_code, 0) << running->StderrText();
  json j = json::parse(running->StdoutText());
  EXPECT_EQ(j["ended_by"], "client") << j.dump(2);
  EXPECT_EQ(j["interrupted"], true);
  EXPECT_LT(j["profiled_seconds"].get<double>(), 30.0);
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false);
}

// A profile cut short or damaged is refused with exit 2, never reported.
TEST_F(AllocationTest, ATruncatedOrCorruptedProfileIsRefused) {
  TargetProcess* t = StartMix();
  ASSERT_NE(t, nullptr);
  const std::string path = dir().File("whole.allocs");
  ASSERT_EQ(Cli(ProfileArgs(*t, "1s", path)).exit_code, 0);
  const std::string gzipped = ReadFile(path);
  const std::string whole = Gunzipped(gzipped);
  ASSERT_TRUE(whole.ends_with("\n--- end\n"));
  // Cut short: the agent's gzip'd file, and the text it holds (report reads both).
  const std::string cut = dir().File("cut.allocs");
  WriteFile(cut, gzipped.substr(0, gzipped.size() - 20));
  const std::string cut_text = dir().File("cut-text.allocs");
  WriteFile(cut_text, whole.substr(0, whole.size() - 20));
  const std::string bad = dir().File("bad.allocs");
  std::string damaged = whole;
  damaged.replace(damaged.find("\"recent_alloc\":["), 16, "\"recent_alloc\":{");
  WriteFile(bad, damaged);
  for (const std::string& file : {cut, cut_text, bad}) {
    CommandResult r = Cli({"report", file});
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_NE(r.err.find(file), std::string::npos) << r;
    EXPECT_EQ(r.out, "") << "no report of a damaged profile";
  }
}

}  // namespace
}  // namespace memprof::integration
