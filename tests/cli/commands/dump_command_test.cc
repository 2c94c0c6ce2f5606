#include "cli/commands/dump_command.h"

#include <gtest/gtest.h>

#include "common/sha256.h"
#include "tests/cli/testing/command_test_fixture.h"

namespace memprof::cli {
namespace {

using testing::MakeDumpStream;
using testing::ReadFile;

std::string ProfileData() {
  std::string data = "heap_v2/524288\n";
  for (int i = 0; i < 5000; ++i) data += "@ 0x" + std::to_string(1000 + i) + "\n";
  return data;
}

std::string Sha(const std::string& data) {
  Sha256 hash;
  hash.Update(data);
  return hash.FinalHex();
}

class DumpCommandTest : public testing::CommandTest {
 protected:
  testing::TempDir out_dir_;
  std::string out_path_ = out_dir_.File("profile.heap");
  Console console_{out_, err_};

  DumpOptions Options(const std::string& out, bool json = false) {
    DumpOptions o;
    o.target.pid = kPid;
    o.target.json = json;
    o.out = out;
    return o;
  }
};

TEST_F(DumpCommandTest, WritesTheVerifiedProfileAndSummarizesOnStderr) {
  const std::string data = ProfileData();
  client_.dump_chunks = MakeDumpStream(data, 4096);
  ASSERT_TRUE(RunDump(Options(out_path_), discovery_, client_, console_, {}));
  EXPECT_EQ(ReadFile(out_path_), data);
  EXPECT_EQ(out_dir_.List(), std::vector<std::string>{"profile.heap"});
  EXPECT_TRUE(out_.str().empty());
  EXPECT_NE(err_.str().find("pid 42: wrote "), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("heap profile to " + out_path_ + " (sha256 " + Sha(data) + ")"),
            std::string::npos)
      << err_.str();
}

TEST_F(DumpCommandTest, CorruptedTrailerLeavesNoFileAndIsDataLoss) {
  auto chunks = MakeDumpStream(ProfileData(), 4096);
  chunks.back().mutable_trailer()->set_sha256_hex(Sha("something else"));
  client_.dump_chunks = chunks;
  auto result = RunDump(Options(out_path_), discovery_, client_, console_, {});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(result.error().message.find(out_path_ + " was not written"), std::string::npos)
      << result.error().message;
  EXPECT_TRUE(out_dir_.List().empty());
}

TEST_F(DumpCommandTest, FailureKeepsAnExistingFileUntouched) {
  testing::WriteFile(out_path_, "previous profile");
  client_.dump_chunks = MakeDumpStream(ProfileData(), 4096);
  client_.dump_chunks.pop_back();  // stream ends without a trailer
  DumpOptions options = Options(out_path_);
  options.force = true;  // even when replacing it was asked for
  auto result = RunDump(options, discovery_, client_, console_, {});
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("was not written"), std::string::npos)
      << result.error().message;
  EXPECT_EQ(ReadFile(out_path_), "previous profile");
  EXPECT_EQ(out_dir_.List(), std::vector<std::string>{"profile.heap"});
}

// Without --force an existing file is refused before the agent is asked;
// with it, the new profile replaces it.
TEST_F(DumpCommandTest, ExistingFileIsReplacedOnlyWithForce) {
  testing::WriteFile(out_path_, "previous profile");
  client_.dump_chunks = MakeDumpStream(ProfileData(), 4096);
  auto refused = RunDump(Options(out_path_), discovery_, client_, console_, {});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("already exists; add --force to replace it"),
            std::string::npos);
  EXPECT_EQ(client_.calls, 0);
  EXPECT_EQ(ReadFile(out_path_), "previous profile");
  DumpOptions options = Options(out_path_);
  options.force = true;
  ASSERT_TRUE(RunDump(options, discovery_, client_, console_, {}));
  EXPECT_EQ(ReadFile(out_path_), ProfileData());
}

TEST_F(DumpCommandTest, AgentErrorMidStreamLeavesNoFile) {
  client_.dump_chunks = MakeDumpStream(ProfileData(), 4096);
  client_.before_chunk = [](size_t i) -> Result<void> {
    if (i == 2) return Fail(ErrorCode::kUnavailable, "agent went away");
    return {};
  };
  auto result = RunDump(Options(out_path_), discovery_, client_, console_, {});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(out_dir_.List().empty());
}

TEST_F(DumpCommandTest, StopRequestedDuringTheStreamCancelsAndLeavesNoFile) {
  std::stop_source stop;
  client_.dump_chunks = MakeDumpStream(ProfileData(), 4096);
  client_.before_chunk = [&stop](size_t i) -> Result<void> {
    if (i == 3) stop.request_stop();  // as the signal thread would
    return {};
  };
  auto result = RunDump(Options(out_path_), discovery_, client_, console_, stop.get_token());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(result.error().message, "dump interrupted; " + out_path_ + " was not written");
  EXPECT_TRUE(out_dir_.List().empty());
}

TEST_F(DumpCommandTest, UnwritableDirectoryFailsBeforeContactingTheAgent) {
  auto result = RunDump(Options("/sys/memprof-test.heap"), discovery_, client_, console_, {});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(result.error().message.find("/sys"), std::string::npos);
  EXPECT_EQ(client_.calls, 0);
}

TEST_F(DumpCommandTest, MissingDirectoryFailsBeforeContactingTheAgent) {
  auto result = RunDump(Options(out_dir_.File("nope/p.heap")), discovery_, client_, console_, {});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);  // as a missing --out-dir
  EXPECT_EQ(client_.calls, 0);
}

TEST_F(DumpCommandTest, StdoutGetsTheRawProfileAndStillVerifies) {
  const std::string data = ProfileData();
  client_.dump_chunks = MakeDumpStream(data, 1000);
  ASSERT_TRUE(RunDump(Options("-"), discovery_, client_, console_, {}));
  EXPECT_EQ(out_.str(), data);
  EXPECT_NE(err_.str().find("heap profile to stdout"), std::string::npos);

  std::ostringstream out2;
  Console console2{out2, err_};
  auto chunks = MakeDumpStream(data, 1000);
  chunks.back().mutable_trailer()->set_sha256_hex(Sha("x"));
  client_.dump_chunks = chunks;
  auto result = RunDump(Options("-"), discovery_, client_, console2, {});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kDataLoss);
}

TEST_F(DumpCommandTest, JsonWithStdoutIsAUsageError) {
  auto result = RunDump(Options("-", true), discovery_, client_, console_, {});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(client_.calls, 0);
}

TEST_F(DumpCommandTest, JsonSummaryHasStableKeysAndTypes) {
  const std::string data = ProfileData();
  client_.dump_chunks = MakeDumpStream(data, 4096);
  ASSERT_TRUE(RunDump(Options(out_path_, true), discovery_, client_, console_, {}));
  const auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j, nlohmann::json({{"schema_version", 1},
                               {"pid", 42},
                               {"path", out_path_},
                               {"size_bytes", data.size()},
                               {"sha256", Sha(data)},
                               {"sample_interval_bytes", 524288},
                               {"created_unix_ms", 1700000000000}}));
  EXPECT_TRUE(err_.str().empty());
}

}  // namespace
}  // namespace memprof::cli
