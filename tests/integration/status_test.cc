// memprofctl status (and list) against live targets of every shape.
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"

namespace memprof::integration {
namespace {

using nlohmann::json;

class StatusTest : public ShapeTest {};

// Every key of the `status --json` contract, with its type.
void ExpectStatusSchema(const json& j) {
  for (const char* key : {"executable", "agent_version", "allocator", "allocator_version",
                          "malloc_conf", "socket"}) {
    EXPECT_TRUE(j.contains(key) && j[key].is_string()) << key << " in " << j.dump(2);
  }
  for (const char* key : {"pid", "uid", "sample_interval_bytes", "window_end_unix_ms",
                          "dumps_served", "rss_bytes", "agent_started_unix_ms"}) {
    EXPECT_TRUE(j.contains(key) && j[key].is_number_integer()) << key << " in " << j.dump(2);
  }
  for (const char* key : {"profiling_supported", "profiling_enabled", "profiling_active"}) {
    EXPECT_TRUE(j.contains(key) && j[key].is_boolean()) << key << " in " << j.dump(2);
  }
  ASSERT_TRUE(j.contains("command_line") && j["command_line"].is_array()) << j.dump(2);
  for (const json& arg : j["command_line"]) EXPECT_TRUE(arg.is_string()) << j.dump(2);
}

TEST_P(StatusTest, JsonFollowsTheContract) {
  json j = StatusJson(target());
  ASSERT_NO_FATAL_FAILURE(ExpectStatusSchema(j));
  EXPECT_EQ(j["pid"], target().pid());
  EXPECT_EQ(j["uid"], ::getuid());
  EXPECT_EQ(j["allocator"], "jemalloc");
  EXPECT_TRUE(j["allocator_version"].get<std::string>().starts_with("5.")) << j.dump(2);
  EXPECT_EQ(j["profiling_supported"], true);
  EXPECT_EQ(j["profiling_enabled"], true);
  EXPECT_EQ(j["profiling_active"], false);
  EXPECT_EQ(j["sampler"], "jemalloc") << "jemalloc with prof:true keeps its own sampler";
  EXPECT_EQ(j["window_end_unix_ms"], 0);
  EXPECT_EQ(j["dumps_served"], 0);
  EXPECT_GT(j["rss_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(j["socket"], target().socket_path());
  EXPECT_NE(j["malloc_conf"].get<std::string>().find("prof:true"), std::string::npos);
  int64_t started = j["agent_started_unix_ms"].get<int64_t>();
  EXPECT_GT(started, NowUnixMs() - 10 * 60 * 1000);
  EXPECT_LE(started, NowUnixMs() + 1000);
  EXPECT_EQ(j["executable"], shape().binary);
  ASSERT_FALSE(j["command_line"].empty());
  EXPECT_EQ(j["command_line"].back(), shape().binary);
  // How the agent came in: the linked target calls memprof_agent_start.
  EXPECT_EQ(j["started_by"], GetParam() == Shape::kLinked ? "linked" : "preload");
}

TEST_P(StatusTest, SampleIntervalReflectsMallocConf) {
  json j = StatusJson(target());
  // `run` merges the user's MALLOC_CONF (lg_prof_sample:14) with prof:true.
  int64_t expected = GetParam() == Shape::kRunPlain ? 16384 : 524288;
  EXPECT_EQ(j["sample_interval_bytes"], expected) << j.dump(2);
}

TEST_P(StatusTest, TextNamesPidAllocatorAndState) {
  CommandResult r = CliFor(target(), "status");
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.err, "") << r;
  EXPECT_NE(r.out.find(std::to_string(target().pid())), std::string::npos) << r;
  EXPECT_NE(r.out.find("jemalloc"), std::string::npos) << r;
  EXPECT_NE(r.out.find("profiling"), std::string::npos) << r;
  EXPECT_NE(r.out.find(target().socket_path()), std::string::npos) << r;
  EXPECT_NE(r.out.find(": "), std::string::npos) << "expected key: value lines\n" << r;
}

TEST_P(StatusTest, PidMayBeOmittedWithExactlyOneAgent) {
  CommandResult r = Cli({"status", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(ParseJsonOutput(r)["pid"], target().pid());
}

TEST_P(StatusTest, PidComesFromMemprofPidEnv) {
  CommandResult r = Cli({"status", "--json"}, {{"MEMPROF_PID", std::to_string(target().pid())}});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(ParseJsonOutput(r)["pid"], target().pid());
}

TEST_P(StatusTest, ListShowsTheTarget) {
  CommandResult r = Cli({"list", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  json j = ParseJsonOutput(r);
  EXPECT_EQ(j["socket_dir"], SocketDir());
  ASSERT_TRUE(j["targets"].is_array()) << r;
  ASSERT_EQ(j["targets"].size(), 1u) << r;
  const json& t = j["targets"][0];
  EXPECT_EQ(t["pid"], target().pid());
  EXPECT_EQ(t["allocator"], "jemalloc");
  EXPECT_EQ(t["profiling_enabled"], true);
  EXPECT_EQ(t["profiling_active"], false);
  EXPECT_EQ(t["socket"], target().socket_path());
  EXPECT_EQ(t["problem"], "");
  EXPECT_TRUE(t["uid"].is_number_integer() && t["user"].is_string() && t["command"].is_string() &&
              t["agent_version"].is_string())
      << t.dump(2);

  CommandResult text = Cli({"list"});
  ASSERT_EQ(text.exit_code, 0) << text;
  for (const char* column : {"PID", "USER", "ALLOCATOR", "PROFILING", "AGENT", "COMMAND"}) {
    EXPECT_NE(text.out.find(column), std::string::npos) << column << "\n" << text;
  }
  EXPECT_NE(text.out.find(std::to_string(target().pid())), std::string::npos) << text;
  EXPECT_NE(text.out.find("inactive"), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(AllShapes, StatusTest,
                         ::testing::Values(Shape::kLinked, Shape::kPreloaded, Shape::kRunPlain,
                                           Shape::kRunGlibc),
                         ShapeName);

}  // namespace
}  // namespace memprof::integration
