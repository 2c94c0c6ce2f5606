#include "cli/collect/periodic_dump.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/io/dump_file_name.h"
#include "common/sha256.h"
#include "tests/cli/collect/fake_tick_clock.h"
#include "tests/cli/testing/command_test_fixture.h"

namespace memprof::cli {
namespace {

using std::chrono::seconds;
using std::chrono::system_clock;
using testing::MakeDumpStream;
using testing::ReadFile;

// 2026-11-22 21:15:30 UTC
const system_clock::time_point kStart = system_clock::from_time_t(1795382130);

std::string Profile() {
  std::string data = "heap_v2/524288\n";
  for (int i = 0; i < 300; ++i) data += "@ 0x" + std::to_string(4096 + i) + "\n";
  return data;
}

class PeriodicDumpTest : public testing::CommandTest {
 protected:
  testing::TempDir out_dir_;
  testing::FakeTickClock ticks_;
  Console console_{out_, err_};
  std::stop_source stop_;
  const Target target_{kPid, sockets_ + "/42.sock", "demo"};

  void SetUp() override {
    CommandTest::SetUp();
    client_.dump_chunks = MakeDumpStream(Profile(), 1000);
  }

  PeriodicDumpPlan Plan(uint64_t count, seconds every = seconds(60)) {
    PeriodicDumpPlan plan;
    plan.out_dir = out_dir_.path();
    plan.every = every;
    plan.count = count;
    plan.host = "web1";
    return plan;
  }

  PeriodicDumpClocks Clocks() {
    PeriodicDumpClocks clocks;
    clocks.ticks = ticks_.Clock();
    // Wall time follows the virtual clock, so each dump gets its own name.
    clocks.wall = [this] {
      return kStart + std::chrono::duration_cast<system_clock::duration>(
                          ticks_.now - testing::FakeTickClock().now);
    };
    return clocks;
  }

  Result<void> Run(const PeriodicDumpPlan& plan) {
    return RunPeriodicDump(plan, target_, discovery_, client_, console_, stop_.get_token(),
                           Clocks());
  }

  std::string Name(int seconds_after_start, const std::string& ext = "heap", int attempt = 0) {
    return DumpFileName("web1", kPid, kStart + seconds(seconds_after_start), ext, attempt);
  }
};

TEST_F(PeriodicDumpTest, WritesCountVerifiedFilesOnePerPeriod) {
  ASSERT_TRUE(Run(Plan(3)));
  EXPECT_EQ(out_dir_.List(), (std::vector<std::string>{Name(0), Name(60), Name(120)}));
  for (const std::string& name : out_dir_.List()) {
    EXPECT_EQ(ReadFile(out_dir_.File(name)), Profile()) << name;
    struct stat st {};
    ASSERT_EQ(::stat(out_dir_.File(name).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << name;
  }
  EXPECT_EQ(ticks_.sleeps.size(), 2u) << "no sleep before the first dump or after the last";
  EXPECT_EQ(client_.calls, 3);
  EXPECT_EQ(out_.str(), "");
  EXPECT_NE(err_.str().find("pid 42: wrote "), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find(out_dir_.File(Name(120)) + " (sha256 "), std::string::npos);
  EXPECT_NE(err_.str().find("[3/3]"), std::string::npos) << err_.str();
}

TEST_F(PeriodicDumpTest, JsonIsOneLinePerDump) {
  PeriodicDumpPlan plan = Plan(2);
  plan.json = true;
  ASSERT_TRUE(Run(plan));
  std::istringstream lines(out_.str());
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    ++n;
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["sequence"], n);
    EXPECT_EQ(j["pid"], kPid);
    EXPECT_EQ(j["format"], "heap");
    EXPECT_EQ(j["path"], out_dir_.File(Name(60 * (n - 1))));
    EXPECT_EQ(j["size_bytes"], Profile().size());
    Sha256 sha;
    sha.Update(Profile());
    EXPECT_EQ(j["sha256"], sha.FinalHex());
  }
  EXPECT_EQ(n, 2);
  EXPECT_EQ(err_.str(), "");
}

TEST_F(PeriodicDumpTest, NeverOverwritesAnExistingFile) {
  testing::WriteFile(out_dir_.File(Name(0)), "precious");
  testing::WriteFile(out_dir_.File(Name(0, "heap", 1)), "precious too");
  ASSERT_TRUE(Run(Plan(1)));
  EXPECT_EQ(ReadFile(out_dir_.File(Name(0))), "precious");
  EXPECT_EQ(ReadFile(out_dir_.File(Name(0, "heap", 1))), "precious too");
  EXPECT_EQ(ReadFile(out_dir_.File(Name(0, "heap", 2))), Profile());
  EXPECT_EQ(out_dir_.List().size(), 3u);
}

TEST_F(PeriodicDumpTest, StopBetweenDumpsEndsSuccessfullyAndKeepsTheFiles) {
  ticks_.on_sleep = [this] {
    if (ticks_.sleeps.size() == 2) stop_.request_stop();  // while waiting for the third
  };
  ASSERT_TRUE(Run(Plan(0)));  // until interrupted
  EXPECT_EQ(out_dir_.List(), (std::vector<std::string>{Name(0), Name(60)}));
  EXPECT_NE(err_.str().find("interrupted; stopped after 2 dumps, kept in " + out_dir_.path()),
            std::string::npos)
      << err_.str();
}

TEST_F(PeriodicDumpTest, StopDuringADumpDiscardsThatDumpOnly) {
  client_.before_chunk = [this](size_t index) -> Result<void> {
    if (client_.calls == 2 && index == 2) {  // the second dump, mid-stream
      stop_.request_stop();
      return Fail(ErrorCode::kCancelled, "interrupted");
    }
    return {};
  };
  ASSERT_TRUE(Run(Plan(5)));
  EXPECT_EQ(out_dir_.List(), std::vector<std::string>{Name(0)});
  EXPECT_EQ(ReadFile(out_dir_.File(Name(0))), Profile());
}

TEST_F(PeriodicDumpTest, TargetGoneEndsWithExit3KeepingTheFilesWritten) {
  client_.before_chunk = [this](size_t index) -> Result<void> {
    if (client_.calls == 3 && index == 1) {
      std::filesystem::remove_all(proc_ + "/42");  // the process exits mid-dump
      return Fail(ErrorCode::kUnavailable, "the agent stopped answering");
    }
    return {};
  };
  auto result = Run(Plan(0));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(result.error().message,
            "pid 42 (demo) has gone away (no process with pid 42); stopped after 2 dumps, kept in " +
                out_dir_.path());
  EXPECT_EQ(out_dir_.List(), (std::vector<std::string>{Name(0), Name(60)}));
}

TEST_F(PeriodicDumpTest, OtherFailuresKeepTheirCodeAndSayWhatWasKept) {
  client_.dump_result = Fail(ErrorCode::kFailedPrecondition, "heap profiling was not enabled");
  auto result = Run(Plan(3));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(result.error().message, "heap profiling was not enabled; no dump was written");
  EXPECT_TRUE(out_dir_.List().empty());
}

TEST_F(PeriodicDumpTest, ABusyAgentSkipsOneTickOnly) {
  client_.before_chunk = [this](size_t index) -> Result<void> {
    if (client_.calls == 2 && index == 0) {
      return Fail(ErrorCode::kResourceExhausted, "the agent is busy with 2 dumps");
    }
    return {};
  };
  ASSERT_TRUE(Run(Plan(3)));
  EXPECT_EQ(out_dir_.List(), (std::vector<std::string>{Name(0), Name(120)}));
}

TEST_F(PeriodicDumpTest, AReportFormatGetsItsExtension) {
  PeriodicDumpPlan plan = Plan(1);
  plan.format = "collapsed";
  client_.dump_chunks = MakeDumpStream(
      "heap_v2/1\n  t*: 1: 64 [0: 0]\n@ 0x1 0\n  t*: 1: 64 [2: 128]\n\nMAPPED_LIBRARIES:\n", 1000);
  ASSERT_TRUE(Run(plan)) << err_.str();
  EXPECT_EQ(out_dir_.List(), std::vector<std::string>{Name(0, "collapsed")});
}

TEST_F(PeriodicDumpTest, OutputDirectoryIsCheckedFirst) {
  auto missing = CheckOutputDirectory(out_dir_.File("nope"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(missing.error().message,
            "--out-dir '" + out_dir_.File("nope") + "' does not exist; create it first (mkdir -p)");
  testing::WriteFile(out_dir_.File("file"), "x");
  auto file = CheckOutputDirectory(out_dir_.File("file"));
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(file.error().message.find("is not a directory"), std::string::npos);
  EXPECT_TRUE(CheckOutputDirectory(out_dir_.path()));
  EXPECT_EQ(out_dir_.List(), std::vector<std::string>{"file"}) << "the probe leaves nothing";
}

}  // namespace
}  // namespace memprof::cli
