// What memprofctl's command line makes of what people type, right or wrong
// (docs/errors.md): each case checks the message and the exit code, that the
// target was not touched, and that nothing was written.
#include <sys/stat.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/duration.h"
#include "tests/integration/harness/integration_fixture.h"

namespace memprof::integration {
namespace {

class CommandLineTest : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    target_ = StartShape(Shape::kPreloaded);  // profiling ready, not active
    ASSERT_NE(target_, nullptr);
    pid_ = std::to_string(target_->pid());
  }
  // The target was not asked to do anything: no dump, profiling as it was.
  void ExpectUntouched() {
    nlohmann::json status = StatusJson(*target_);
    EXPECT_EQ(status["dumps_served"], 0);
    EXPECT_EQ(status["profiling_active"], false);
  }
  // A real heap profile of the target, for `report`, in a directory of its
  // own (the test's directory is where nothing may be left).
  std::string TakeDump() {
    const std::string dumps = dir().File("dumps");
    ::mkdir(dumps.c_str(), 0700);
    const std::string path = dumps + "/p.heap";
    CommandResult r = CliFor(*target_, "dump", {"--out", path});
    EXPECT_EQ(r.exit_code, 0) << r;
    return path;
  }

  TargetProcess* target_ = nullptr;
  std::string pid_;
};

TEST_F(CommandLineTest, MistypedCommandsAndOptionsGetTheNearestOne) {
  ExpectAll({
      {{"stat", "--pid", pid_}, 2, "unknown command 'stat'; did you mean 'stats'?"},
      {{"status", "--pid", pid_, "--jsno"},
       2,
       "unknown option '--jsno' for 'status'; did you mean '--json'?"},
      {{"status", "--pdi", pid_}, 2, "unknown option '--pdi' for 'status'; did you mean '--pid'?"},
      // Not "File does not exist: svg": the unknown option is named, not its value.
      {{"report", dir().File("x.heap"), "--fromat", "svg"},
       2,
       "unknown option '--fromat' for 'report'; did you mean '--format'?"},
      {{"dump", "--pid", pid_, "--out", dir().File("p.heap"), "--fromat", "svg"},
       2,
       "unknown option '--fromat' for 'dump'; did you mean '--format'?"},
      {{"frobnicate"}, 2, "unknown command 'frobnicate' (valid commands: list, status, "},
  });
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{});
  ExpectUntouched();
}

// CLI11's wording ("--top: 1 required N missing", "Value abc not in range 1
// to 1000000", "File does not exist") never reaches the user.
TEST_F(CommandLineTest, BadValuesAreToldInOurOwnWords) {
  const std::string dump = TakeDump();
  const std::string out = dir().File("r.txt");
  ExpectAll({
      {{"report", dump, "--top"},
       2,
       "report: --top needs a value (N): show at most N functions (text, json; 1 to 1000000)"},
      {{"report", dump, "--top", "abc", "-o", out},
       2,
       "report: --top: invalid number 'abc': expected a whole number from 1 to 1000000"},
      {{"report", dump, "--top", "0"}, 2, "report: --top: invalid number '0'"},
      {{"report", dump, "--format", "yaml"},
       2,
       "report: --format: unknown report format 'yaml' (valid: text, collapsed, pprof, svg, "
       "json)"},
      {{"report", dir().File("none.heap")}, 2, "report: DUMP: no such file '"},
      {{"report"}, 2, "report: DUMP is required: heap profile(s) written by `memprofctl dump`"},
      {{"status", "--pid", pid_, "--parallel", "0"}, 2, "status: --parallel: invalid number '0'"},
      {{"status", "--pid", pid_, "--json=maybe"},
       2,
       "status: --json is a flag: give it alone, or as --json=true or --json=false (got "
       "'maybe')"},
      {{"dump", "--pid", pid_, "--out"}, 2, "dump: --out needs a value (FILE|-): file to write"},
      {{"dump", "--pid", pid_, "--out", out, "--out", out + "2"},
       2,
       "dump: --out is given more than once"},
      {{"profile", "--pid", pid_, "--out", out},
       2,
       "profile: --duration is required (DURATION): how long to profile"},
      {{"status", "--pid", pid_, "--timeout"}, 2, "error: --timeout needs a value (DURATION)"},
  });
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"dumps"});
  EXPECT_EQ(StatusJson(*target_)["dumps_served"], 1);  // TakeDump's
}

TEST_F(CommandLineTest, DurationsTakeAnyUnitCaseAndFractions) {
  const auto window_left = [&] {
    return std::chrono::milliseconds(StatusJson(*target_)["window_end_unix_ms"].get<int64_t>() -
                                     NowUnixMs());
  };
  for (const auto& [text, length] : std::vector<std::pair<std::string, std::chrono::minutes>>{
           {"0.5h", std::chrono::minutes(30)},
           {"1H", std::chrono::minutes(60)},
           {"10M", std::chrono::minutes(10)},
           {"1.5m", std::chrono::minutes(1)}}) {
    SCOPED_TRACE(text);
    CommandResult r = CliFor(*target_, "activate", {"--for", text});
    ASSERT_EQ(r.exit_code, 0) << r;
    EXPECT_GT(window_left(), length - std::chrono::minutes(1));
    EXPECT_LE(window_left(), length + std::chrono::minutes(1));
  }
  CommandResult r = Cli({"--timeout", "1.5S", "status", "--pid", pid_});
  EXPECT_EQ(r.exit_code, 0) << r;
  ExpectAll({
      {{"activate", "--pid", pid_, "--for", "1.5"},
       2,
       "activate: --for: invalid duration '1.5': missing unit"},
      {{"activate", "--pid", pid_, "--for", "0.5s"},
       2,
       "invalid duration '0.5s': must be between 1s and 24h"},
      {{"activate", "--pid", pid_, "--for", "1.0005s"},
       2,
       "invalid duration '1.0005s': finer than a millisecond"},
  });
}

// `deactivate --pid 25152 1` made 1 a second target (exit 6, and pid 1
// looked up); now it is a usage error and nothing is changed.
TEST_F(CommandLineTest, AStrayWordAfterPidIsAUsageErrorNotASecondTarget) {
  ASSERT_EQ(CliFor(*target_, "activate").exit_code, 0);
  ExpectAll({
      {{"deactivate", "--pid", pid_, "1"},
       2,
       "unexpected argument '1' for 'deactivate': a process is named with --pid (--pid 1), "
       "several with --pid A,B or --pid A --pid B"},
      {{"status", "--pid", pid_, "1", "--json"}, 2, "unexpected argument '1' for 'status'"},
  });
  EXPECT_EQ(StatusJson(*target_)["profiling_active"], true);
  // Several targets are still named as before.
  TargetProcess* other = StartShape(Shape::kPreloaded);
  ASSERT_NE(other, nullptr);
  const std::string o = std::to_string(other->pid());
  for (const std::vector<std::string>& pids :
       {std::vector<std::string>{"--pid", pid_ + "," + o},
        std::vector<std::string>{"--pid", pid_, "--pid", o}}) {
    std::vector<std::string> args = {"status", "--json"};
    args.insert(args.end(), pids.begin(), pids.end());
    CommandResult many = Cli(args);
    EXPECT_EQ(many.exit_code, 0) << many;
    EXPECT_EQ(std::count(many.out.begin(), many.out.end(), '\n'), 2) << many;
  }
}

// One mistake, one exit code: a missing directory is a usage error for
// --out (of dump, profile, report) as for --out-dir, found before any agent
// is asked.
TEST_F(CommandLineTest, MissingDirectoryIsExit2ForOutAndOutDirAlike) {
  const std::string missing = dir().File("missing");
  const std::string dump = TakeDump();
  ExpectAll({
      {{"dump", "--pid", pid_, "--out", missing + "/p.heap"},
       2,
       "output path '" + missing + "/p.heap': directory '" + missing +
           "' does not exist; create it first (mkdir -p)"},
      {{"dump", "--pid", pid_, "--out-dir", missing},
       2,
       "--out-dir '" + missing + "' does not exist; create it first (mkdir -p)"},
      {{"profile", "--pid", pid_, "--duration", "1s", "--out", missing + "/p.heap"},
       2,
       "directory '" + missing + "' does not exist"},
      {{"profile", "--pid", pid_, "--duration", "1s", "--out-dir", missing},
       2,
       "--out-dir '" + missing + "' does not exist"},
      {{"report", dump, "-o", missing + "/r.txt"}, 2, "directory '" + missing + "' does not exist"},
  });
  EXPECT_FALSE(FileExists(missing));
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"dumps"});
  EXPECT_EQ(StatusJson(*target_)["dumps_served"], 1);  // TakeDump's
  EXPECT_EQ(StatusJson(*target_)["profiling_active"], false);
}

// `--out` replaced an existing file silently while `--out-dir` never did:
// now neither replaces anything unless --force says so.
TEST_F(CommandLineTest, AnExistingOutFileIsReplacedOnlyWithForce) {
  const std::string dump = TakeDump();
  const std::string out = dir().File("keep.heap");
  ASSERT_TRUE(WriteFile(out, "precious\n"));
  const std::string exists =
      "output file '" + out + "' already exists; add --force to replace it, or name another file";
  ExpectAll({
      {{"dump", "--pid", pid_, "--out", out}, 2, exists},
      {{"dump", "--pid", pid_, "--out", out, "--format", "text"}, 2, exists},
      {{"profile", "--pid", pid_, "--duration", "1s", "--out", out}, 2, exists},
      {{"report", dump, "-o", out}, 2, exists},
      {{"dump", "--pid", pid_, "--out-dir", dir().path(), "--force"},
       2,
       "dump: --force requires --out"},
  });
  EXPECT_EQ(ReadFile(out), "precious\n");
  EXPECT_EQ(NonSocketEntries(), (std::vector<std::string>{"dumps", "keep.heap"}));
  EXPECT_EQ(StatusJson(*target_)["dumps_served"], 1);  // TakeDump's
  EXPECT_EQ(StatusJson(*target_)["profiling_active"], false);

  CommandResult forced = CliFor(*target_, "dump", {"--out", out, "--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced;
  EXPECT_TRUE(ReadFile(out).starts_with("heap_v2/")) << "not replaced";
  CommandResult report = Cli({"report", dump, "-o", out, "--force", "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report;
  EXPECT_TRUE(ReadFile(out).starts_with("{")) << ReadFile(out);
  EXPECT_EQ(NonSocketEntries(), (std::vector<std::string>{"dumps", "keep.heap"}));
}

TEST_F(CommandLineTest, ReportJsonIsFormatJson) {
  const std::string dump = TakeDump();
  CommandResult with_json = Cli({"report", dump, "--json"});
  ASSERT_EQ(with_json.exit_code, 0) << with_json;
  CommandResult with_format = Cli({"report", dump, "--format", "json"});
  ASSERT_EQ(with_format.exit_code, 0) << with_format;
  EXPECT_EQ(ParseJsonOutput(with_json), ParseJsonOutput(with_format));
  EXPECT_EQ(Cli({"report", dump, "--json", "--format", "json"}).exit_code, 0);
  ExpectAll({{{"report", dump, "--json", "--format", "svg", "-o", dir().File("r.svg")},
              2,
              "report: --json is --format json; it cannot be combined with --format svg"}});
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"dumps"});
}

TEST_F(CommandLineTest, HelpAndVersionWorkAsCommands) {
  for (const std::vector<std::string>& topic :
       {std::vector<std::string>{}, {"dump"}, {"report"}, {"run"}}) {
    std::vector<std::string> as_flag = topic;
    as_flag.push_back("--help");
    std::vector<std::string> as_command = {"help"};
    as_command.insert(as_command.end(), topic.begin(), topic.end());
    CommandResult flag = Cli(as_flag);
    CommandResult command = Cli(as_command);
    EXPECT_EQ(command.exit_code, 0) << command;
    EXPECT_EQ(command.out, flag.out) << JoinArgv(as_command);
    EXPECT_EQ(command.err, "");
  }
  CommandResult version = Cli({"version"});
  EXPECT_EQ(version.exit_code, 0) << version;
  EXPECT_EQ(version.out, Cli({"--version"}).out);
  ExpectAll({{{"help", "stat"}, 2, "help: unknown command 'stat'; did you mean 'stats'?"}});
}

TEST_F(CommandLineTest, RunHelpHasOneUsageLineAndShowsTheAllocator) {
  CommandResult r = Cli({"run", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(r.out.starts_with("Start CMD with the memprof agent")) << r.out;
  EXPECT_NE(r.out.find("\nUsage: memprofctl run [--allocator NAME] [--] CMD [ARGS...]\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("Usage:"), r.out.rfind("Usage:")) << r.out;
  EXPECT_NE(r.out.find("  --allocator NAME"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace memprof::integration
