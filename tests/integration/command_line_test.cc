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

}  // namespace
}  // namespace memprof::integration
