// memprofctl doctor and purge against real targets: purge_target holds and
// frees known amounts, with jemalloc (decay disabled, so freed pages stay
// dirty) and with glibc malloc.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "common/proc_smaps.h"
#include "common/text_file.h"
#include "tests/integration/harness/guest_fixture.h"
#include "tests/integration/harness/test_binaries.h"

namespace memprof::integration {
namespace {

using nlohmann::json;

constexpr int64_t kMiB = 1 << 20;
// jemalloc with every page it frees kept dirty until purged.
constexpr char kNoDecayConf[] = "prof:true,prof_active:false,dirty_decay_ms:-1,muzzy_decay_ms:-1";

class DoctorTest : public GuestTest {
 protected:
  TargetProcess* StartPurgeTarget(bool jemalloc, const std::string& conf = kNoDecayConf) {
    TargetOptions options;
    options.argv = {jemalloc ? MEMPROF_IT_PURGE_TARGET : MEMPROF_IT_PURGE_TARGET_GLIBC};
    options.env = {{"LD_PRELOAD", kAgentPreload}};
    if (jemalloc) options.env["MALLOC_CONF"] = conf;
    options.stdin_pipe = true;
    return Start(options);
  }

  // Sends a command and waits for its answer (the `count`th line like it).
  void Command(TargetProcess& t, const std::string& line, const std::string& answer,
               size_t count = 1) {
    ASSERT_TRUE(t.process().WriteStdin(line + "\n"));
    auto answers = AwaitStdout(t, std::regex(answer + "\n"), count);
    ASSERT_EQ(answers.size(), count) << t.process().StdoutText();
  }

  json Doctor(TargetProcess& t) {
    CommandResult r = CliFor(t, "doctor", {"--json"});
    EXPECT_EQ(r.exit_code, 0) << r;
    return ParseJsonOutput(r);
  }

  static bool HasFinding(const json& doctor, const std::string& id) {
    for (const json& f : doctor["findings"]) {
      if (f["id"] == id) return true;
    }
    return false;
  }
};

int64_t Int(const json& j, const char* key) { return j.at(key).get<int64_t>(); }

TEST_F(DoctorTest, FiguresMatchWhatTheTargetHoldsAndAddUp) {
  TargetProcess* t = StartPurgeTarget(/*jemalloc=*/true);
  ASSERT_NE(t, nullptr);
  ASSERT_NO_FATAL_FAILURE(Command(*t, "hold 200", "held 200"));
  json j = Doctor(*t);
  const json& allocator = j["allocator"];
  EXPECT_EQ(allocator["kind"], "jemalloc");
  EXPECT_GE(Int(allocator, "allocated"), 200 * kMiB) << j.dump(2);
  EXPECT_LE(Int(allocator, "allocated"), 232 * kMiB) << "200 MiB held plus the agent's own";
  EXPECT_EQ(allocator["jemalloc"]["dirty_decay_ms"], -1);
  EXPECT_EQ(allocator["jemalloc"]["muzzy_decay_ms"], -1);
  EXPECT_GE(Int(allocator["jemalloc"], "arenas"), 1);

  // One RSS: the sum over smaps, which the parts add up to; smaps_rollup,
  // read now, agrees.
  auto rollup = ReadTextFile("/proc/" + std::to_string(t->pid()) + "/smaps_rollup");
  ASSERT_TRUE(rollup);
  const int64_t rss_now = static_cast<int64_t>(*ParseSmapsRollupRss(*rollup));
  EXPECT_NEAR(Int(j, "rss_bytes"), rss_now, 16 * kMiB) << j.dump(2);
  const json& b = j["breakdown"];
  EXPECT_EQ(Int(b, "smaps_rss_bytes"), Int(j, "rss_bytes"));
  EXPECT_EQ(Int(b, "allocator_bytes") + Int(b, "thread_stacks_bytes") + Int(b, "binaries_bytes") +
                Int(b, "other_files_bytes") + Int(b, "shared_memory_bytes") +
                Int(b, "other_anonymous_bytes"),
            Int(b, "smaps_rss_bytes"));
  EXPECT_GE(Int(b, "allocator_bytes"), 200 * kMiB);
  EXPECT_GE(Int(b, "thread_stacks"), 2) << "main thread and the agent's";
  EXPECT_GT(Int(b, "binaries_bytes"), 0);
  EXPECT_FALSE(HasFinding(j, "dirty_pages")) << j.dump(2);
  EXPECT_FALSE(HasFinding(j, "heap_growth")) << "it holds, it does not grow\n" << j.dump(2);
  EXPECT_EQ(j["growth"]["readings"].size(), 3u) << j.dump(2);
  EXPECT_GE(j["growth"]["seconds"].get<double>(), 1.9) << "watched over the default 2s";

  CommandResult text = CliFor(*t, "doctor");
  ASSERT_EQ(text.exit_code, 0) << text;
  for (const char* row : {"allocator", "thread stacks", "binaries, libraries", "other anonymous",
                          "fragmentation", "dirty_decay_ms:-1", "growth over "}) {
    EXPECT_NE(text.out.find(row), std::string::npos) << row << "\n" << text;
  }
  // One RSS figure and one allocator resident figure, each shown once.
  std::smatch header;
  ASSERT_TRUE(std::regex_search(text.out, header, std::regex(R"(^pid \d+: RSS ([0-9.]+ [KMG]iB))")))
      << text;
  EXPECT_TRUE(std::regex_search(
      text.out, std::regex("\ntotal +" + std::string(header[1]) + " +100.0%  RSS: the sum over")))
      << text;
  EXPECT_EQ(text.out.find("smaps_rollup"), std::string::npos) << text;
  EXPECT_EQ(text.out.find(", resident "), std::string::npos)
      << "the allocator's resident memory is the breakdown's row only\n"
      << text;
}

// jemalloc with one arena prints no merged arena statistics (narenas:1, as
// some Debian servers are built): doctor reads that arena's.
TEST_F(DoctorTest, ASingleArenaJemallocIsDiagnosed) {
  TargetProcess* t = StartPurgeTarget(/*jemalloc=*/true, std::string(kNoDecayConf) + ",narenas:1");
  ASSERT_NE(t, nullptr);
  ASSERT_NO_FATAL_FAILURE(Command(*t, "hold 200", "held 200"));
  ASSERT_NO_FATAL_FAILURE(Command(*t, "free", "freed 199"));
  json j = Doctor(*t);
  EXPECT_EQ(j["allocator"]["jemalloc"]["narenas"], 1) << j.dump(2);
  EXPECT_GE(Int(j["allocator"]["jemalloc"], "dirty_bytes"), 190 * kMiB) << j.dump(2);
  EXPECT_GE(Int(j["allocator"]["jemalloc"], "threads"), 1) << j.dump(2);
  EXPECT_TRUE(HasFinding(j, "dirty_pages")) << j.dump(2);
  EXPECT_EQ(CliFor(*t, "stats", {"--json"}).exit_code, 0);
  EXPECT_EQ(CliFor(*t, "purge").exit_code, 0);
}

// growth_target leaks 16 MiB before each reading of jemalloc's statistics
// reaches jemalloc (tests/testprogs/growth_target.c), so between doctor's
// first and last reading the heap grows by exactly 32 MiB, give or take the
// few KiB the agent allocates and frees while it serves, however long the readings take on a
// loaded machine: no clock decides whether the growth is seen. Doctor's watch
// would have to last over 60 s for 32 MiB to fall under its 512 KiB/s.
TEST_F(DoctorTest, AGrowingHeapIsAFinding) {
  constexpr int64_t kGrowthPerReading = 16 * kMiB;
  TargetOptions options;
  options.argv = {MEMPROF_IT_GROWTH_TARGET};
  options.env = {{"LD_PRELOAD", kAgentPreload}};
  TargetProcess* t = Start(options);
  ASSERT_NE(t, nullptr);
  json j = Doctor(*t);
  ASSERT_TRUE(HasFinding(j, "heap_growth")) << j.dump(2);
  const json& growth = j["growth"];
  ASSERT_EQ(growth["readings"].size(), 3u) << j.dump(2);
  for (size_t i = 1; i < 3; ++i) {
    const int64_t step = Int(growth["readings"][i], "allocated") -
                         Int(growth["readings"][i - 1], "allocated");
    // The agent's own serving (gRPC's buffers) allocates and frees a few KiB.
    EXPECT_GT(step, kGrowthPerReading - kMiB) << i << "\n" << j.dump(2);
    EXPECT_LT(step, kGrowthPerReading + kMiB) << i << "\n" << j.dump(2);
  }
  const int64_t change = Int(growth, "allocated_change_bytes");
  EXPECT_EQ(change, Int(growth["readings"][2], "allocated") -
                        Int(growth["readings"][0], "allocated"));
  const double seconds = growth["seconds"].get<double>();
  EXPECT_DOUBLE_EQ(growth["allocated_bytes_per_second"].get<double>(),
                   static_cast<double>(change) / seconds);
  EXPECT_EQ(growth["steady"], true);
  CommandResult text = CliFor(*t, "doctor");
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_TRUE(std::regex_search(text.out,
                                std::regex(R"(1\. the heap grows [0-9.]+ MiB/s \[heap_growth\])")))
      << text;
  EXPECT_NE(text.out.find("memprofctl profile --pid " + std::to_string(t->pid())),
            std::string::npos)
      << text;
}

TEST_F(DoctorTest, FreedPagesAreFoundAndPurgeGivesThemBack) {
  TargetProcess* t = StartPurgeTarget(/*jemalloc=*/true);
  ASSERT_NE(t, nullptr);
  ASSERT_NO_FATAL_FAILURE(Command(*t, "hold 400", "held 400"));
  ASSERT_NO_FATAL_FAILURE(Command(*t, "free", "freed 399"));
  json j = Doctor(*t);
  EXPECT_GE(Int(j["allocator"]["jemalloc"], "dirty_bytes"), 390 * kMiB) << j.dump(2);
  ASSERT_TRUE(HasFinding(j, "dirty_pages")) << j.dump(2);
  CommandResult text = CliFor(*t, "doctor");
  EXPECT_NE(text.out.find("memprofctl purge --pid " + std::to_string(t->pid())), std::string::npos)
      << text;
  EXPECT_NE(text.out.find("MALLOC_CONF=dirty_decay_ms:10000"), std::string::npos) << text;

  CommandResult r = CliFor(*t, "purge", {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  json p = ParseJsonOutput(r);
  EXPECT_EQ(p["allocator"], "jemalloc");
  EXPECT_EQ(p["method"], "mallctl arena.4096.purge");
  EXPECT_GE(Int(p["before"], "unused_bytes"), 390 * kMiB) << p.dump(2);
  EXPECT_LT(Int(p["after"], "unused_bytes"), 8 * kMiB) << p.dump(2);
  EXPECT_LE(Int(p, "rss_change_bytes"), -300 * kMiB) << p.dump(2);
  EXPECT_EQ(Int(p, "rss_change_bytes"),
            Int(p["after"], "rss_bytes") - Int(p["before"], "rss_bytes"));
  EXPECT_FALSE(HasFinding(Doctor(*t), "dirty_pages"));
}

TEST_F(DoctorTest, PurgeTextShowsBeforeAndAfter) {
  TargetProcess* t = StartPurgeTarget(/*jemalloc=*/true);
  ASSERT_NE(t, nullptr);
  ASSERT_NO_FATAL_FAILURE(Command(*t, "hold 100", "held 100"));
  ASSERT_NO_FATAL_FAILURE(Command(*t, "free", "freed 99"));
  CommandResult r = CliFor(*t, "purge");
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.out.find("purged pid " + std::to_string(t->pid())), std::string::npos) << r;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(RSS +[0-9.]+ MiB +[0-9.]+ MiB +-[0-9.]+ MiB)")))
      << r;
  // 99 MiB freed in 64 KiB blocks, each in a slightly larger jemalloc extent.
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(allocator unused +1?[0-9]{2}\.[0-9] MiB +[0-9.]+ [KM]?i?B +-[0-9.]+ MiB)")))
      << r;
}

TEST_F(DoctorTest, GlibcTargetIsDiagnosedAndTrimmed) {
  TargetProcess* t = StartPurgeTarget(/*jemalloc=*/false);
  ASSERT_NE(t, nullptr);
  ASSERT_NO_FATAL_FAILURE(Command(*t, "hold 200", "held 200"));
  ASSERT_NO_FATAL_FAILURE(Command(*t, "free", "freed 199"));
  json j = Doctor(*t);
  EXPECT_EQ(j["allocator"]["kind"], "glibc");
  EXPECT_GE(Int(j["allocator"]["glibc"], "free_bytes"), 190 * kMiB) << j.dump(2);
  EXPECT_GE(Int(j["allocator"]["glibc"], "arenas"), 1);
  EXPECT_TRUE(HasFinding(j, "free_in_arenas")) << j.dump(2);

  CommandResult r = CliFor(*t, "purge", {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  json p = ParseJsonOutput(r);
  EXPECT_EQ(p["allocator"], "glibc");
  EXPECT_EQ(p["method"], "malloc_trim(0)");
  EXPECT_LE(Int(p, "rss_change_bytes"), -150 * kMiB) << p.dump(2);
}

TEST_F(DoctorTest, DeadPidAndPidWithoutAgent) {
  CommandResult sh = RunCommand({"/bin/sh", "-c", "echo $$"}, {});
  const std::string dead = std::to_string(std::stoi(sh.out));
  ExpectCliError(Cli({"doctor", "--pid", dead}), 3, "no process with pid " + dead);
  ExpectCliError(Cli({"purge", "--pid", dead}), 3, "no process with pid " + dead);
  TargetProcess* bare = StartWithoutAgent();
  ASSERT_NE(bare, nullptr);
  ExpectCliError(CliFor(*bare, "doctor"), 3, "has no memprof agent");
  ExpectCliError(CliFor(*bare, "purge", {"--json"}), 3, "has no memprof agent");
}

TEST_F(DoctorTest, UsageErrors) {
  ExpectCliError(Cli({"doctor", "--pid", "abc"}), 2, "invalid pid 'abc'");
  ExpectCliError(Cli({"purge", "--pid", "0"}), 2, "invalid pid '0'");
  ExpectCliError(Cli({"purge", "--raw"}), 2, "--raw");
  ExpectCliError(Cli({"doctor", "--pid", "1", "--all"}), 2, "--all");
}

}  // namespace
}  // namespace memprof::integration
