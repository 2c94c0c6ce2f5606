// Every --json output of the real memprofctl, against a real target, follows
// its schema in docs/schemas (docs/user-guide.md, "Machine output"): each
// command's output is saved to a file and checked by
// tests/schemas/validate_json.py, whose own test (tests/schemas) shows that it
// fails on documents that break a schema.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"

namespace memprof::integration {
namespace {

class JsonSchemaTest : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    auto out = TempDir::Create("memprof-it-schema");
    ASSERT_TRUE(out.has_value()) << out.error().message;
    out_.emplace(std::move(*out));
    target_ = StartShape(Shape::kLinked);
    ASSERT_NE(target_, nullptr);
  }

  std::string Pid() const { return std::to_string(target_->pid()); }
  std::string Out(const std::string& name) const { return out_->File(name); }

  // Saves a successful command's stdout as `name` and returns its path.
  std::string Save(const CommandResult& r, const std::string& name, int exit_code = 0) {
    EXPECT_EQ(r.exit_code, exit_code) << r;
    const std::string path = Out(name);
    EXPECT_TRUE(WriteFile(path, r.out));
    return path;
  }

  // validate_json.py SCHEMA FILE [--lines] [--result-schema RESULT].
  static void ExpectValid(const std::string& schema, const std::string& file, bool lines = false,
                          const std::string& result_schema = "") {
    std::vector<std::string> argv = {MEMPROF_IT_PYTHON3, MEMPROF_IT_JSON_VALIDATOR, Schema(schema),
                                     file};
    if (lines) argv.push_back("--lines");
    if (!result_schema.empty()) argv.insert(argv.end(), {"--result-schema", Schema(result_schema)});
    CommandResult r = RunCommand(argv, {});
    EXPECT_EQ(r.exit_code, 0) << schema << " schema, " << file << ":\n" << ReadFile(file) << r;
  }

  static std::string Schema(const std::string& name) {
    return std::string(MEMPROF_IT_SCHEMA_DIR) + "/" + name + ".schema.json";
  }

  TargetProcess* target_ = nullptr;
  std::optional<TempDir> out_;
};

TEST_F(JsonSchemaTest, ControlCommandsFollowTheirSchemas) {
  ExpectValid("list", Save(Cli({"list", "--json"}), "list.json"));
  ExpectValid("status", Save(CliFor(*target_, "status", {"--json"}), "status.json"));
  ExpectValid("activate",
              Save(CliFor(*target_, "activate", {"--for", "10m", "--json"}), "activate.json"));
  ExpectValid("activate",
              Save(CliFor(*target_, "activate", {"--sample-interval", "4KiB", "--reset", "--json"}),
                   "activate-reset.json"));
  ExpectValid("activate", Save(CliFor(*target_, "activate",
                                      {"--capture-growth", "64MiB", "--keep", "2", "--json"}),
                               "activate-capture.json"));
  ExpectValid("status", Save(CliFor(*target_, "status", {"--json"}), "status-armed.json"));
  ExpectValid("deactivate", Save(CliFor(*target_, "deactivate", {"--json"}), "deactivate.json"));
}

TEST_F(JsonSchemaTest, StatsFollowsItsSchemas) {
  ExpectValid("stats", Save(CliFor(*target_, "stats", {"--json"}), "stats.json"));
  ExpectValid("stats-watch",
              Save(CliFor(*target_, "stats", {"--watch", "1s", "--count", "2", "--format", "json"}),
                   "watch.jsonl"),
              true);
}

TEST_F(JsonSchemaTest, DoctorAndPurgeFollowTheirSchemas) {
  ExpectValid("doctor", Save(CliFor(*target_, "doctor", {"--json"}), "doctor.json"));
  ExpectValid("purge", Save(CliFor(*target_, "purge", {"--json"}), "purge.json"));
}

TEST_F(JsonSchemaTest, DumpAndReportsFollowTheirSchemas) {
  ASSERT_EQ(CliFor(*target_, "activate").exit_code, 0);
  const std::string heap = Out("one.heap");
  ExpectValid("dump", Save(CliFor(*target_, "dump", {"--out", heap, "--json"}), "dump.json"));
  const std::string analysed = Out("dumped-report.json");
  ExpectValid("dump",
              Save(CliFor(*target_, "dump", {"--format", "json", "--out", analysed, "--json"}),
                   "dump-format.json"));
  ExpectValid("report", analysed);
  const std::string series = Out("series");
  ASSERT_EQ(::mkdir(series.c_str(), 0700), 0);
  ExpectValid("dump",
              Save(CliFor(*target_, "dump",
                          {"--every", "1s", "--count", "3", "--out-dir", series, "--json"}),
                   "every.jsonl"),
              true);
  const std::string report = Out("report.json");
  ASSERT_EQ(Cli({"report", heap, "--format", "json", "-o", report}).exit_code, 0);
  ExpectValid("report", report);
  const std::string diff = Out("diff.json");
  ASSERT_EQ(Cli({"report", heap, "--base", heap, "--format", "json", "-o", diff}).exit_code, 0);
  ExpectValid("report", diff);
  std::vector<std::string> args = {"report", "--trend", "--format", "json"};
  for (const auto& entry : std::filesystem::directory_iterator(series)) {
    args.push_back(entry.path().string());
  }
  ExpectValid("report-trend", Save(Cli(args), "trend.json"));
}

TEST_F(JsonSchemaTest, ProfileFollowsItsSchema) {
  ExpectValid("profile", Save(CliFor(*target_, "profile",
                                     {"--duration", "1s", "--out", Out("p.heap"), "--json"}),
                              "profile.json"));
}

// One line per target, each `result` the command's own document; a target
// that fails has its line too (exit 6).
TEST_F(JsonSchemaTest, MultiTargetLinesFollowTheirSchema) {
  for (const char* command : {"status", "activate", "deactivate", "stats"}) {
    const std::string name = std::string(command) + "-all.jsonl";
    ExpectValid("multi-target", Save(Cli({command, "--all", "--json"}), name), true, command);
  }
  const std::string no_agent = std::to_string(::getpid());
  ExpectValid("multi-target",
              Save(Cli({"status", "--pid", Pid() + "," + no_agent, "--json"}), "failed.jsonl", 6),
              true, "status");
  ExpectValid("multi-target",
              Save(Cli({"dump", "--all", "--out-dir", out_->path(), "--json"}), "dump-all.jsonl"),
              true, "dump");
}

}  // namespace
}  // namespace memprof::integration
