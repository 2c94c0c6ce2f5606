// tcmalloc targets: a program linked with gperftools' libtcmalloc,
// the agent preloaded, driven through status, stats, activate, dump,
// deactivate and report by the real memprofctl, and through the exporter's
// heap endpoint; and `memprofctl run --allocator tcmalloc`.
#include <gtest/gtest.h>

#include <algorithm>

#include <string>
#include <utility>
#include <vector>

#include "tests/integration/harness/exporter_fixture.h"
#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/http_client.h"

namespace memprof::integration {
namespace {

using nlohmann::json;

constexpr char kTcmallocTarget[] = MEMPROF_IT_TCMALLOC_TARGET;
// Smaller than run's 512 KiB, so that the 4 KiB leak lands in samples soon.
constexpr char kSamplePeriod[] = "65536";

class TcmallocTest : public ExporterTest {
 protected:
  // tcmalloc_target with the agent preloaded; sampling unless `sampling` is false.
  TargetProcess* StartTcmalloc(bool sampling = true) {
    TargetOptions options;
    options.argv = {kTcmallocTarget};
    options.env["LD_PRELOAD"] = kAgentPreload;
    if (sampling) options.env["TCMALLOC_SAMPLE_PARAMETER"] = kSamplePeriod;
    return Start(options);
  }

  // `dump --out` (a file in the test directory) and the file's contents.
  std::string DumpText(const TargetProcess& t, const std::string& name) {
    const std::string path = dir().File(name);
    CommandResult dump = CliFor(t, "dump", {"--out", path});
    EXPECT_EQ(dump.exit_code, 0) << dump;
    return ReadFile(path);
  }
};

// `attach` says what works on a tcmalloc process as the agent
// serves it: with the sampler on since start-up, everything; without it,
// status, stats, doctor and purge, and profiles by memprof's own sampler,
// allocation windows and captures included; with tcmalloc's own sampler,
// windows and captures refused, by the agent and beforehand by --dry-run.
TEST_F(TcmallocTest, AttachPromisesWhatTheAgentServes) {
  for (const bool sampling : {true, false}) {
    SCOPED_TRACE(sampling ? "TCMALLOC_SAMPLE_PARAMETER set" : "no sampling");
    TargetOptions options;
    options.argv = {kTcmallocTarget};
    if (sampling) options.env["TCMALLOC_SAMPLE_PARAMETER"] = kSamplePeriod;
    options.expect_agent = false;
    TargetProcess* t = Start(options);
    ASSERT_NE(t, nullptr);
    CommandResult dry = CliFor(*t, "attach", {"--dry-run", "--json"});
    ASSERT_EQ(dry.exit_code, 0) << dry;
    const json promised = ParseJsonOutput(dry);
    EXPECT_EQ(promised["allocator"], "tcmalloc") << promised;
    CommandResult attached = CliFor(*t, "attach");
    ASSERT_EQ(attached.exit_code, 0) << attached;
    for (const char* command : {"stats", "doctor", "purge"}) {
      EXPECT_EQ(CliFor(*t, command).exit_code, 0) << command;
    }
    // Without its sampler, memprof's own serves, allocation windows and
    // captures too; tcmalloc's own sampler has neither.
    const std::vector<std::string> works = promised["works"];
    const std::vector<std::string> refused = promised["refused"];
    EXPECT_NE(std::find(works.begin(), works.end(), "dump"), works.end()) << promised;
    EXPECT_EQ(promised["sampler"], sampling ? "tcmalloc" : "memprof") << promised;
    EXPECT_EQ(std::find(works.begin(), works.end(), "profile --allocations") != works.end(),
              !sampling)
        << promised;
    const std::vector<std::string> expected_refused =
        sampling ? std::vector<std::string>{"profile --allocations",
                                            "activate --capture-near-limit/--capture-growth"}
                 : std::vector<std::string>{};
    EXPECT_EQ(refused, expected_refused) << promised;
    CommandResult activate = CliFor(*t, "activate");
    CommandResult dump = CliFor(*t, "dump", {"--out", dir().File("attached.heap"), "--force"});
    EXPECT_EQ(activate.exit_code, 0) << activate;
    EXPECT_EQ(dump.exit_code, 0) << dump;
    EXPECT_EQ(StatusJson(*t)["sampler"], sampling ? "tcmalloc" : "memprof");
    ASSERT_TRUE(t->Terminate().has_value());
  }
}

TEST_F(TcmallocTest, StatusNamesTcmallocAndItsSampling) {
  TargetProcess* t = StartTcmalloc();
  ASSERT_NE(t, nullptr);
  json status = StatusJson(*t);
  EXPECT_EQ(status["allocator"], "tcmalloc") << status;
  EXPECT_TRUE(status["allocator_version"].get<std::string>().starts_with("gperftools "))
      << status;
  EXPECT_EQ(status["profiling_supported"], true) << status;
  EXPECT_EQ(status["profiling_enabled"], true) << status;
  EXPECT_EQ(status["profiling_active"], false) << status;
  EXPECT_EQ(status["sample_interval_bytes"], 65536) << status;
  CommandResult text = CliFor(*t, "status");
  EXPECT_EQ(text.exit_code, 0) << text;
  EXPECT_NE(text.out.find("tcmalloc"), std::string::npos) << text;
  EXPECT_EQ(text.out.find("hint:"), std::string::npos) << text;
}

TEST_F(TcmallocTest, StatsMapsItsPropertiesOntoTheSummary) {
  TargetProcess* t = StartTcmalloc();
  ASSERT_NE(t, nullptr);
  CommandResult r = CliFor(*t, "stats", {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  json stats = ParseJsonOutput(r);
  EXPECT_EQ(stats["allocator"], "tcmalloc") << stats;
  // The ring alone holds 4 MiB.
  EXPECT_GE(stats["allocated"].get<uint64_t>(), 4u << 20) << stats;
  EXPECT_GE(stats["active"].get<uint64_t>(), stats["allocated"].get<uint64_t>()) << stats;
  EXPECT_GE(stats["resident"].get<uint64_t>(), stats["allocated"].get<uint64_t>()) << stats;
  ASSERT_TRUE(stats.contains("tcmalloc")) << stats;
  const json& tc = stats["tcmalloc"];
  for (const char* key : {"current_allocated_bytes", "heap_size", "total_physical_bytes",
                          "pageheap_free_bytes", "pageheap_unmapped_bytes",
                          "current_total_thread_cache_bytes"}) {
    EXPECT_TRUE(tc.contains(key) && tc[key].is_number_unsigned()) << key << ": " << tc;
  }
  EXPECT_GE(tc["heap_size"].get<uint64_t>(), 4u << 20) << tc;
  EXPECT_EQ(stats["retained"], tc["pageheap_unmapped_bytes"]) << stats;
  EXPECT_FALSE(stats.contains("jemalloc")) << stats;

  CommandResult table = CliFor(*t, "stats");
  EXPECT_EQ(table.exit_code, 0) << table;
  EXPECT_NE(table.out.find("allocator: tcmalloc"), std::string::npos) << table;
  EXPECT_NE(table.out.find("tcmalloc properties:"), std::string::npos) << table;
  EXPECT_NE(table.out.find("generic.heap_size"), std::string::npos) << table;
  CommandResult raw = CliFor(*t, "stats", {"--raw"});
  EXPECT_EQ(raw.exit_code, 0) << raw;
  EXPECT_NE(raw.out.find("MALLOC:"), std::string::npos) << "tcmalloc's GetStats text\n" << raw;
}

TEST_F(TcmallocTest, ActivateDumpDeactivate) {
  TargetProcess* t = StartTcmalloc();
  ASSERT_NE(t, nullptr);
  // Before any activation the agent serves no samples, and says what to do.
  ExpectCliError(CliFor(*t, "dump", {"--out", dir().File("early.heap")}), 5,
                 "memprofctl activate");
  EXPECT_FALSE(FileExists(dir().File("early.heap")));

  CommandResult activate = CliFor(*t, "activate", {"--json"});
  ASSERT_EQ(activate.exit_code, 0) << activate;
  EXPECT_EQ(ParseJsonOutput(activate)["current"]["active"], true) << activate;
  EXPECT_EQ(StatusJson(*t)["profiling_active"], true);

  const std::string live = DumpText(*t, "live.heap");
  EXPECT_TRUE(live.starts_with("heap profile:")) << live.substr(0, 200);
  EXPECT_NE(live.find("@ heap_v2/65536"), std::string::npos) << live.substr(0, 200);
  EXPECT_NE(live.find("MAPPED_LIBRARIES:"), std::string::npos);
  EXPECT_NE(live.find("tcmalloc_target"), std::string::npos) << "the maps name the program";

  CommandResult deactivate = CliFor(*t, "deactivate", {"--json"});
  ASSERT_EQ(deactivate.exit_code, 0) << deactivate;
  EXPECT_EQ(ParseJsonOutput(deactivate)["current"]["active"], false) << deactivate;
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false);
  // After deactivation: the sample taken then, the same however often asked.
  const std::string first = DumpText(*t, "after1.heap");
  const std::string second = DumpText(*t, "after2.heap");
  EXPECT_TRUE(first.starts_with("heap profile:")) << first.substr(0, 200);
  EXPECT_EQ(first, second);
}

// tcmalloc has sampled since start-up: the exporter's heap endpoint serves the
// heap of a process nobody activated (for a moment, the shortest window: the
// agent serves tcmalloc's sample only while activated), and puts the state
// back.
TEST_F(TcmallocTest, TheExporterServesTheHeapOfAProcessNeverActivated) {
  TargetProcess* t = StartTcmalloc();
  ASSERT_NE(t, nullptr);
  std::unique_ptr<Subprocess> exporter = StartExporter({"--listen", "127.0.0.1:0"});
  ASSERT_NE(exporter, nullptr);
  const std::string address = AwaitListening(*exporter);
  ASSERT_FALSE(address.empty()) << exporter->StderrText();
  const std::string pid = std::to_string(t->pid());
  test_support::HttpReply heap = test_support::HttpGet(address, "/debug/pprof/heap?pid=" + pid);
  ASSERT_EQ(heap.status, 200) << heap.body;
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false) << "left inactive, as it was";
  // The gzipped profile.proto: its string table names the allocating function.
  const std::string file = dir().File("heap.pb.gz");
  ASSERT_TRUE(WriteFile(file, heap.body));
  CommandResult strings = RunCommand({"/bin/sh", "-c", "gzip -dc < \"$1\"", "sh", file}, {});
  ASSERT_EQ(strings.exit_code, 0) << strings;
  EXPECT_NE(strings.out.find("TcmallocTargetAllocate"), std::string::npos);
}

// Each --json output of a tcmalloc target against its schema (docs/schemas,
// checked by tests/schemas/validate_json.py as in json_schema_test.cc).
TEST_F(TcmallocTest, JsonOutputsFollowTheirSchemas) {
  TargetProcess* t = StartTcmalloc();
  ASSERT_NE(t, nullptr);
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
      {"status", {"status", "--json"}},         {"stats", {"stats", "--json"}},
      {"activate", {"activate", "--json"}},     {"deactivate", {"deactivate", "--json"}},
      {"purge", {"purge", "--json"}},
  };
  for (const auto& [schema, args] : commands) {
    CommandResult r = CliFor(*t, args[0], {args.begin() + 1, args.end()});
    ASSERT_EQ(r.exit_code, 0) << r;
    const std::string file = dir().File(schema + ".json");
    ASSERT_TRUE(WriteFile(file, r.out));
    CommandResult check = RunCommand({MEMPROF_IT_PYTHON3, MEMPROF_IT_JSON_VALIDATOR,
                                      std::string(MEMPROF_IT_SCHEMA_DIR) + "/" + schema +
                                          ".schema.json",
                                      file},
                                     {});
    EXPECT_EQ(check.exit_code, 0) << schema << ":\n" << r.out << check;
  }
}

TEST_F(TcmallocTest, ReportOfADumpNamesTheLeakingFunction) {
  TargetProcess* t = StartTcmalloc();
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(CliFor(*t, "activate").exit_code, 0);
  const std::string path = dir().File("report.heap");
  std::string text;
  int exit_code = 0;
  const bool named = WaitUntil(
      [&] {
        // The same file each round: --force replaces the last one.
        CommandResult dump = CliFor(*t, "dump", {"--out", path, "--force"});
        exit_code = dump.exit_code;
        if (dump.exit_code != 0) {
          text = "dump failed: " + dump.err;
          return true;
        }
        CommandResult report = Cli({"report", path});
        exit_code = report.exit_code;
        text = report.out + report.err;
        // A report that fails fails again; one that works may not show the
        // leak yet (sampling is random).
        return report.exit_code != 0 || report.out.find("TcmallocTargetLeak") != std::string::npos;
      },
      std::chrono::seconds(60), std::chrono::milliseconds(200));
  EXPECT_TRUE(named) << text;
  // Not a search for "error" in the text: symbols such as _dlerror_run
  // appear in the report whenever dlopen's stacks are sampled.
  EXPECT_EQ(exit_code, 0) << text;
  EXPECT_EQ(text.find("memprofctl: error"), std::string::npos) << text;
  EXPECT_NE(text.find("TcmallocTargetLeak"), std::string::npos) << text;
}

// tcmalloc not told to sample at start-up: memprof's own sampler serves,
// from activation on; a dump before it says so and writes nothing.
TEST_F(TcmallocTest, WithoutSampleParameterMemprofsSamplerServes) {
  TargetProcess* t = StartTcmalloc(/*sampling=*/false);
  ASSERT_NE(t, nullptr);
  json status = StatusJson(*t);
  EXPECT_EQ(status["allocator"], "tcmalloc");
  EXPECT_EQ(status["profiling_enabled"], false);
  EXPECT_EQ(status["sampler"], "memprof");
  CommandResult text = CliFor(*t, "status");
  EXPECT_EQ(text.out.find("hint:"), std::string::npos) << text;
  ExpectCliError(CliFor(*t, "dump", {"--out", dir().File("p.heap")}), 5, "memprofctl activate");
  EXPECT_FALSE(FileExists(dir().File("p.heap")));
  EXPECT_EQ(CliFor(*t, "activate").exit_code, 0);
  EXPECT_EQ(CliFor(*t, "dump", {"--out", dir().File("p.heap")}).exit_code, 0);
  EXPECT_NE(ReadFile(dir().File("p.heap")).find("# memprof_sampler"), std::string::npos);
  EXPECT_EQ(CliFor(*t, "deactivate").exit_code, 0);
  EXPECT_EQ(CliFor(*t, "stats", {"--json"}).exit_code, 0);
}

// libtcmalloc_minimal (preloaded into a glibc program): statistics, and heap
// profiles by memprof's own sampler.
TEST_F(TcmallocTest, MinimalTcmallocHasStatisticsAndMemprofsProfiles) {
  TargetOptions options;
  options.argv = {kGlibcTarget};
  options.env["LD_PRELOAD"] = std::string(MEMPROF_IT_TCMALLOC_MINIMAL_LIBRARY) + ":" + kAgentLibrary;
  options.env["TCMALLOC_SAMPLE_PARAMETER"] = kSamplePeriod;
  TargetProcess* t = Start(options);
  ASSERT_NE(t, nullptr);
  json status = StatusJson(*t);
  EXPECT_EQ(status["allocator"], "tcmalloc") << status;
  EXPECT_EQ(status["profiling_supported"], false) << status;
  EXPECT_EQ(ParseJsonOutput(CliFor(*t, "stats", {"--json"}))["allocator"], "tcmalloc");
  EXPECT_EQ(status["sampler"], "memprof") << status;
  EXPECT_EQ(CliFor(*t, "activate").exit_code, 0);
  EXPECT_EQ(CliFor(*t, "dump", {"--out", dir().File("m.heap")}).exit_code, 0);
  EXPECT_TRUE(ReadFile(dir().File("m.heap")).starts_with("heap_v2/"));
}

// doctor judges tcmalloc by its own figures and says which checks do not
// apply; purge works through ReleaseFreeMemory.
TEST_F(TcmallocTest, DoctorJudgesTcmallocAndPurgeWorks) {
  TargetProcess* t = StartTcmalloc();
  ASSERT_NE(t, nullptr);
  CommandResult doctor = CliFor(*t, "doctor", {"--json"});
  ASSERT_EQ(doctor.exit_code, 0) << doctor;
  json d = ParseJsonOutput(doctor);
  EXPECT_EQ(d["allocator"]["kind"], "tcmalloc") << d;
  EXPECT_GT(d["allocator"]["allocated"].get<int64_t>(), 0) << d;
  EXPECT_GT(d["allocator"]["tcmalloc"]["max_thread_cache_bytes"].get<int64_t>(), 0) << d;
  EXPECT_EQ(d["allocator"]["jemalloc"]["arenas"], 0) << d;
  EXPECT_GT(d["breakdown"]["allocator_bytes"].get<int64_t>(), 0) << d;
  CommandResult text = CliFor(*t, "doctor");
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_NE(text.out.find("tcmalloc's resident memory"), std::string::npos) << text;
  EXPECT_NE(text.out.find("page heap free"), std::string::npos) << text;
  EXPECT_NE(text.out.find("not judged: decay times, arenas and background threads"),
            std::string::npos)
      << text;
  CommandResult purge = CliFor(*t, "purge", {"--json"});
  ASSERT_EQ(purge.exit_code, 0) << purge;
  json p = ParseJsonOutput(purge);
  EXPECT_EQ(p["allocator"], "tcmalloc") << p;
  EXPECT_EQ(p["method"], "MallocExtension::ReleaseFreeMemory()") << p;
}

TEST_F(TcmallocTest, SampleIntervalCannotChangeAtRunTime) {
  TargetProcess* t = StartTcmalloc();
  ASSERT_NE(t, nullptr);
  ExpectCliError(CliFor(*t, "activate", {"--sample-interval", "1MiB"}), 5,
                 "TCMALLOC_SAMPLE_PARAMETER");
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false);
  // Peak capture is jemalloc's alone, and asking for it changes nothing.
  ExpectCliError(CliFor(*t, "activate", {"--capture-growth", "64MiB"}), 5,
                 "peak capture (--capture-growth, --capture-near-limit) needs jemalloc");
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false);
  // The interval in force is no change at all.
  EXPECT_EQ(CliFor(*t, "activate", {"--sample-interval", "64KiB"}).exit_code, 0);
}

TEST_F(TcmallocTest, RunWithAllocatorTcmallocPreloadsItAndSamples) {
  TargetOptions options;
  options.argv = {kMemprofctl, "run", "--allocator", "tcmalloc", "--", kGlibcTarget};
  TargetProcess* t = Start(options);
  ASSERT_NE(t, nullptr);
  json status = StatusJson(*t);
  EXPECT_EQ(status["allocator"], "tcmalloc") << status;
  EXPECT_EQ(status["profiling_enabled"], true) << status;
  EXPECT_EQ(status["sample_interval_bytes"], 524288) << status;
  EXPECT_EQ(CliFor(*t, "activate").exit_code, 0);
  const std::string profile = DumpText(*t, "run.heap");
  EXPECT_TRUE(profile.starts_with("heap profile:")) << profile.substr(0, 200);
}

TEST_F(TcmallocTest, RunRefusesWhatCannotWork) {
  ExpectCliError(Cli({"run", "--allocator", "tcmalloc", "--", kPlainTarget}), 5,
                 "uses jemalloc");
  ExpectCliError(Cli({"run", "--allocator", "hoard", "--", kGlibcTarget}), 2,
                 "valid: jemalloc, tcmalloc");
  ExpectCliError(Cli({"run", "--allocator", "tcmalloc", "--", kGlibcTarget},
                     {{"MEMPROF_TCMALLOC_LIB", dir().File("no-such-libtcmalloc.so")}}),
                 2, "MEMPROF_TCMALLOC_LIB");
}

}  // namespace
}  // namespace memprof::integration
