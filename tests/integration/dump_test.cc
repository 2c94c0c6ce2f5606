// memprofctl dump: verified heap_v2 files that jeprof can read, stdout, and
// concurrent dumps.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <string>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/debian_tools.h"
#include "tests/support/subprocess.h"

namespace memprof::integration {
namespace {

using nlohmann::json;
using std::chrono::seconds;

class DumpTest : public ShapeTest {
 protected:
  void SetUp() override {
    ShapeTest::SetUp();
    ASSERT_FALSE(HasFatalFailure());
    CommandResult r = CliFor(target(), "activate");
    ASSERT_EQ(r.exit_code, 0) << r;
  }
};

TEST_P(DumpTest, JeprofNamesTheAllocatingFunctions) {
  std::string report = DumpUntilJeprofNames(target(), shape().binary, shape().leak_function);
  EXPECT_NE(report.find(shape().leak_function), std::string::npos) << report;
  report = DumpUntilJeprofNames(target(), shape().binary, shape().allocate_function);
  EXPECT_NE(report.find(shape().allocate_function), std::string::npos) << report;
}

TEST_P(DumpTest, FileIsVerifiedAndJsonDescribesIt) {
  std::string path = dir().File("profile.heap");
  int64_t before = NowUnixMs();
  CommandResult r = CliFor(target(), "dump", {"--out", path, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  json j = ParseJsonOutput(r);
  std::string data = ReadFile(path);
  ASSERT_FALSE(data.empty());
  EXPECT_TRUE(data.starts_with("heap_v2/")) << data.substr(0, 100);
  EXPECT_NE(data.find("MAPPED_LIBRARIES:"), std::string::npos);
  EXPECT_EQ(j["pid"], target().pid());
  EXPECT_EQ(j["path"], path);
  EXPECT_EQ(j["size_bytes"], data.size());
  EXPECT_EQ(j["sha256"], Sha256Hex(data));
  EXPECT_EQ(j["sample_interval_bytes"], StatusJson(target())["sample_interval_bytes"]);
  EXPECT_TRUE(j["created_unix_ms"].is_number_integer()) << j.dump(2);
  EXPECT_GE(j["created_unix_ms"].get<int64_t>(), before - 1000);
  EXPECT_LE(j["created_unix_ms"].get<int64_t>(), NowUnixMs() + 1000);
  // The sample period in the header is the agent's sample interval.
  EXPECT_TRUE(data.starts_with("heap_v2/" + std::to_string(j["sample_interval_bytes"].get<int64_t>())))
      << data.substr(0, 100);

  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "a profile is private to its owner";
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"profile.heap"}) << "temp files left behind";
  EXPECT_EQ(StatusJson(target())["dumps_served"], 1);
}

TEST_P(DumpTest, HumanSummaryGoesToStderr) {
  std::string path = dir().File("profile.heap");
  CommandResult r = CliFor(target(), "dump", {"--out", path});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "") << r;
  EXPECT_NE(r.err.find("pid " + std::to_string(target().pid()) + ": wrote"), std::string::npos) << r;
  EXPECT_NE(r.err.find(path), std::string::npos) << r;
  EXPECT_NE(r.err.find("sha256"), std::string::npos) << r;
}

// -q: the same file, and nothing on stderr; an error still is.
TEST_P(DumpTest, QuietWritesTheSameFileAndNothingElse) {
  std::string path = dir().File("profile.heap");
  CommandResult r = CliFor(target(), "dump", {"--out", path, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "") << r;
  EXPECT_EQ(r.err, "") << r;
  EXPECT_TRUE(ReadFile(path).starts_with("heap_v2/"));
  const std::string missing = dir().File("missing/p.heap");
  ExpectCliError(CliFor(target(), "dump", {"--out", missing, "--quiet"}), 2, dir().File("missing"));
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"profile.heap"});
}

// Only when told to (--force): without it the file is refused and kept
// (CommandLineTest.AnExistingOutFileIsReplacedOnlyWithForce).
TEST_P(DumpTest, ReplacesAnExistingFileWithForce) {
  std::string path = dir().File("profile.heap");
  ASSERT_TRUE(WriteFile(path, "old\n"));
  CommandResult r = CliFor(target(), "dump", {"--out", path, "--force"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(ReadFile(path).starts_with("heap_v2/"));
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"profile.heap"});
}

TEST_P(DumpTest, DashWritesTheDumpToStdout) {
  // jeprof prints nothing at all for a profile without stacks, which a dump
  // taken right after activation can be: wait until something was sampled
  // (samples are kept, so the dump below has them too).
  DumpUntilJeprofNames(target(), shape().binary, shape().leak_function);
  CommandResult r = CliFor(target(), "dump", {"--out", "-"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(r.out.starts_with("heap_v2/")) << r;
  EXPECT_NE(r.out.find("MAPPED_LIBRARIES:"), std::string::npos) << "truncated dump on stdout";
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{}) << "--out - must not create files";

  // Equivalent to a file dump: jeprof reads it.
  std::string path = dir().File("from-stdout.heap");
  ASSERT_TRUE(WriteFile(path, r.out));
  std::string jeprof_path;
  ASSERT_TRUE(test_support::CanRun(test_support::Jeprof(), &jeprof_path));
  CommandResult jeprof = RunCommand({jeprof_path, "--text", shape().binary, path}, {});
  EXPECT_EQ(jeprof.exit_code, 0) << jeprof;
  EXPECT_NE(jeprof.out.find("Total"), std::string::npos) << jeprof;
}

TEST_P(DumpTest, ConcurrentDumpsDoNotCollide) {
  constexpr int kDumps = 3;
  std::vector<std::unique_ptr<Subprocess>> procs;
  for (int i = 0; i < kDumps; ++i) {
    auto p = Subprocess::Spawn(SpawnOptions{
        {kMemprofctl, "dump", "--pid", std::to_string(target().pid()), "--out",
         dir().File("c" + std::to_string(i) + ".heap"), "--json"},
        {{"MEMPROF_SOCKET_DIR", SocketDir()}},
        -1});
    ASSERT_TRUE(p.has_value()) << p.error().message;
    procs.push_back(std::move(*p));
  }
  for (int i = 0; i < kDumps; ++i) {
    auto status = procs[i]->Wait(seconds(60));
    ASSERT_TRUE(status.has_value()) << "dump " << i << " hung";
    // One more than the agent streams at once: the third waits its turn
    //, so every dump succeeds with a complete, verified file.
    std::string path = dir().File("c" + std::to_string(i) + ".heap");
    ASSERT_EQ(status->exit_code, 0) << procs[i]->StderrText();
    json j = json::parse(procs[i]->StdoutText(), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << procs[i]->StdoutText();
    std::string data = ReadFile(path);
    EXPECT_EQ(j["size_bytes"], data.size());
    EXPECT_EQ(j["sha256"], Sha256Hex(data));
  }
  for (const std::string& name : NonSocketEntries()) {
    EXPECT_FALSE(name.starts_with(".")) << "temp file left behind: " << name;
  }
}

INSTANTIATE_TEST_SUITE_P(AllShapes, DumpTest,
                         ::testing::Values(Shape::kLinked, Shape::kPreloaded, Shape::kRunPlain,
                                           Shape::kRunGlibc),
                         ShapeName);

}  // namespace
}  // namespace memprof::integration
