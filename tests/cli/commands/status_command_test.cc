#include "cli/commands/status_command.h"

#include "tests/cli/testing/command_test_fixture.h"

namespace memprof::cli {
namespace {

using memprof::v1::StatusResponse;

StatusResponse JemallocStatus() {
  StatusResponse s;
  s.set_pid(42);
  s.set_executable("/usr/bin/demo");
  s.add_command_line("./demo");
  s.add_command_line("--leak");
  s.set_uid(1000);
  s.set_agent_version("0.1.0");
  s.set_allocator(memprof::v1::ALLOCATOR_KIND_JEMALLOC);
  s.set_allocator_version("5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c");
  s.set_profiling_supported(true);
  s.set_profiling_enabled(true);
  s.set_profiling_active(false);
  s.set_sample_interval_bytes(524288);
  s.set_malloc_conf("prof:true,prof_active:false");
  s.set_dumps_served(3);
  s.set_rss_bytes(12897485);
  s.set_agent_started_unix_ms(1700000000000);
  return s;
}

class StatusCommandTest : public testing::CommandTest {};

TEST_F(StatusCommandTest, JsonHasEveryContractKeyWithStableTypes) {
  const Target target{42, "/tmp/memprof/42.sock", "demo"};
  const nlohmann::json j = StatusToJson(StatusResponse(), target);  // all zero values
  const char* numbers[] = {
      "schema_version",       "pid",          "uid",       "sample_interval_bytes",
      "window_end_unix_ms",   "dumps_served", "rss_bytes", "agent_started_unix_ms",
      "activation_generation", "sampler_since_unix_ms"};
  const char* strings[] = {"executable",  "agent_version",      "allocator", "allocator_version",
                           "malloc_conf", "memory_limit_error", "socket",    "started_by",
                           "sampler"};
  const char* booleans[] = {"profiling_supported", "profiling_enabled", "profiling_active"};
  for (const char* key : numbers) EXPECT_TRUE(j.at(key).is_number_integer()) << key;
  for (const char* key : strings) EXPECT_TRUE(j.at(key).is_string()) << key;
  for (const char* key : booleans) EXPECT_TRUE(j.at(key).is_boolean()) << key;
  EXPECT_TRUE(j.at("command_line").is_array());
  EXPECT_TRUE(j.at("capture").at("armed").is_boolean());
  EXPECT_TRUE(j.at("capture").at("held").is_array());
  EXPECT_TRUE(j.at("memory_limit").at("limit_bytes").is_number_integer());
  for (const char* key : {"open_window", "window_end_unix_ms", "record_bound", "held_profile"}) {
    EXPECT_TRUE(j.at("allocation_window").at(key).is_number_integer()) << key;
  }
  EXPECT_TRUE(j.at("sampler_not_intercepted").is_array());
  EXPECT_EQ(j.size(), std::size(numbers) + std::size(strings) + std::size(booleans) + 5);
  EXPECT_EQ(j["allocator"], "other");
  EXPECT_EQ(j["socket"], "/tmp/memprof/42.sock");
}

TEST_F(StatusCommandTest, RunStatusJsonCarriesTheAgentsAnswer) {
  client_.status_result = JemallocStatus();
  StatusOptions options;
  options.target.pid = kPid;
  options.target.json = true;
  ASSERT_TRUE(RunStatus(options, discovery_, client_, out_));
  const auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["pid"], 42);
  EXPECT_EQ(j["allocator"], "jemalloc");
  EXPECT_EQ(j["profiling_enabled"], true);
  EXPECT_EQ(j["profiling_active"], false);
  EXPECT_EQ(j["sample_interval_bytes"], 524288);
  EXPECT_EQ(j["command_line"], nlohmann::json::array({"./demo", "--leak"}));
  EXPECT_EQ(j["socket"], sockets_ + "/42.sock");
  ASSERT_EQ(client_.targets.size(), 1u);
  EXPECT_EQ(client_.targets[0].socket_path, sockets_ + "/42.sock");
}

TEST_F(StatusCommandTest, HumanOutputIsHumanizedAndHasNoHintWhenProfilingWorks) {
  client_.status_result = JemallocStatus();
  StatusOptions options;
  options.target.pid = kPid;
  ASSERT_TRUE(RunStatus(options, discovery_, client_, out_));
  const std::string text = out_.str();
  EXPECT_NE(text.find("RSS:"), std::string::npos);
  EXPECT_NE(text.find("12.3 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("512.0 KiB"), std::string::npos) << text;
  EXPECT_NE(text.find("./demo --leak"), std::string::npos);
  EXPECT_NE(text.find("jemalloc 5.3.0"), std::string::npos);
  EXPECT_EQ(text.find("hint:"), std::string::npos) << text;
}

// The agent names glibc in its version ("glibc 2.36"); status says it once.
// A rewritten process title loses its padding.
TEST_F(StatusCommandTest, TheAllocatorAndTheTitleAreSaidOnce) {
  StatusResponse s = JemallocStatus();
  s.set_allocator(memprof::v1::ALLOCATOR_KIND_GLIBC);
  s.set_allocator_version("glibc 2.36");
  s.clear_command_line();
  s.add_command_line("nginx: worker process            ");
  s.add_command_line("");
  std::ostringstream out;
  PrintStatus(s, Target{42, "/x", "nginx"}, std::chrono::system_clock::now(), out);
  EXPECT_NE(out.str().find("allocator:          glibc 2.36\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("command:            nginx: worker process\n"), std::string::npos)
      << out.str();
  EXPECT_EQ(StatusToJson(s, Target{42, "/x", "nginx"})["allocator_version"], "glibc 2.36");
}

TEST_F(StatusCommandTest, TheActivationGenerationIsShownWhenTheAgentCountsIt) {
  StatusResponse s = JemallocStatus();
  std::ostringstream old_agent;
  PrintStatus(s, Target{42, "/x", "demo"}, std::chrono::system_clock::now(), old_agent);
  EXPECT_EQ(old_agent.str().find("activation gen:"), std::string::npos)
      << "0 means unknown\n"
      << old_agent.str();
  s.set_activation_generation(5);
  std::ostringstream out;
  PrintStatus(s, Target{42, "/x", "demo"}, std::chrono::system_clock::now(), out);
  EXPECT_NE(out.str().find("activation gen:     5\n"), std::string::npos) << out.str();
  EXPECT_EQ(StatusToJson(s, Target{42, "/x", "demo"})["activation_generation"], 5);
}

TEST_F(StatusCommandTest, HintWhenProfilingWasNotEnabledAtStartUp) {
  StatusResponse s = JemallocStatus();
  s.set_profiling_enabled(false);
  std::ostringstream out;
  PrintStatus(s, Target{42, "/x", "demo"}, std::chrono::system_clock::now(), out);
  EXPECT_NE(out.str().find("hint: heap profiling was not enabled when the process started; "
                           "restart it with MALLOC_CONF=prof:true,prof_active:false (or use "
                           "`memprofctl run`)"),
            std::string::npos)
      << out.str();
}

TEST_F(StatusCommandTest, HintForGlibcTargets) {
  StatusResponse s;
  s.set_allocator(memprof::v1::ALLOCATOR_KIND_GLIBC);
  std::ostringstream out;
  PrintStatus(s, Target{42, "/x", ""}, std::chrono::system_clock::now(), out);
  EXPECT_NE(out.str().find("hint: the process does not use jemalloc"), std::string::npos);
}

// A glibc process whose agent samples by itself: no restart hint, and the
// status says what its profiles cover and what its hooks cannot see.
TEST_F(StatusCommandTest, MemprofsOwnSamplerIsNamedWithWhatItCovers) {
  StatusResponse s;
  s.set_allocator(memprof::v1::ALLOCATOR_KIND_GLIBC);
  s.set_sampler("memprof");
  s.set_sampler_since_unix_ms(1764648000000);
  s.add_sampler_not_intercepted("the executable defines malloc itself: its own calls are not seen");
  std::ostringstream out;
  PrintStatus(s, Target{42, "/x", ""}, std::chrono::system_clock::now(), out);
  EXPECT_NE(out.str().find("sampler:"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("memprof's own (the allocator cannot sample); profiles hold what was "
                           "allocated since "),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("not intercepted: the executable defines malloc itself"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find("hint:"), std::string::npos) << out.str();
  const nlohmann::json j = StatusToJson(s, Target{42, "/x", ""});
  EXPECT_EQ(j.at("sampler"), "memprof");
  EXPECT_EQ(j.at("sampler_since_unix_ms"), 1764648000000);
  EXPECT_EQ(j.at("sampler_not_intercepted").size(), 1u);
}

TEST_F(StatusCommandTest, ErrorsFromTheClientPassThrough) {
  client_.status_result = Fail(ErrorCode::kUnavailable, "agent gone");
  StatusOptions options;
  options.target.pid = kPid;
  auto result = RunStatus(options, discovery_, client_, out_);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(out_.str().empty());
}

TEST_F(StatusCommandTest, UnknownPidFailsWithoutContactingAnything) {
  StatusOptions options;
  options.target.pid = 7777;
  auto result = RunStatus(options, discovery_, client_, out_);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(client_.calls, 0);
}

}  // namespace
}  // namespace memprof::cli
