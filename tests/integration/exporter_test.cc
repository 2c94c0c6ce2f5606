// Prometheus output: `stats --format prometheus` and the
// `exporter`, against real targets, checked by the real promtool.
#include <signal.h>

#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "tests/integration/harness/exporter_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/debian_tools.h"
#include "tests/support/http_client.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {

using test_support::HttpGet;
using test_support::HttpReply;

namespace {

using std::chrono::seconds;

// Whether `pid` is stopped by a signal: state 'T' in /proc/<pid>/stat (the
// field after the parenthesized command name).
bool IsStopped(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'T';
}

std::string UpLine(pid_t pid, const std::string& command) {
  return "memprof_up{pid=\"" + std::to_string(pid) + "\",command=\"" + command + "\"} ";
}

TEST_F(ExporterTest, StatsFormatPrometheusOfJemallocAndGlibcTargetsPassesPromtool) {
  TargetProcess* je = StartShape(Shape::kPreloaded);
  TargetOptions glibc_options;
  glibc_options.argv = {kGlibcTarget};
  glibc_options.env = {{"LD_PRELOAD", kAgentPreload}};
  TargetProcess* glibc = Start(glibc_options);
  ASSERT_NE(je, nullptr);
  ASSERT_NE(glibc, nullptr);
  CommandResult r = CliFor(*je, "stats", {"--format", "prometheus"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const std::string labels =
      "{pid=\"" + std::to_string(je->pid()) + "\",command=\"plain_target\",allocator=\"jemalloc\"}";
  EXPECT_NE(r.out.find(UpLine(je->pid(), "plain_target") + "1\n"), std::string::npos) << r;
  EXPECT_NE(r.out.find("memprof_profiling_active" + labels + " 0\n"), std::string::npos) << r;
  for (const char* family : {"allocated", "active", "resident", "mapped", "retained", "metadata"}) {
    const std::string name = std::string("memprof_jemalloc_") + family + "_bytes";
    EXPECT_NE(r.out.find("# HELP " + name + " "), std::string::npos) << name;
    EXPECT_NE(r.out.find("# TYPE " + name + " gauge\n" + name + labels + " "), std::string::npos)
        << name << "\n" << r.out;
  }
  const std::regex allocated("memprof_jemalloc_allocated_bytes\\{[^}]*\\} ([0-9]+)\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, allocated)) << r.out;
  EXPECT_GT(std::stoll(m[1].str()), 4 << 20) << "the target keeps 4 MiB live";
  EXPECT_NE(r.out.find("memprof_process_resident_bytes" + labels + " "), std::string::npos);
  ExpectPromtoolAccepts(r.out);

  CommandResult g = CliFor(*glibc, "stats", {"--format", "prometheus"});
  ASSERT_EQ(g.exit_code, 0) << g;
  EXPECT_EQ(g.out.find("memprof_jemalloc_"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("allocator=\"glibc\""), std::string::npos) << g.out;
  ExpectPromtoolAccepts(g.out);
}

TEST_F(ExporterTest, FormatJsonIsTheJsonFlag) {
  TargetProcess* t = StartShape(Shape::kLinked);
  ASSERT_NE(t, nullptr);
  const nlohmann::json a = ParseJsonOutput(CliFor(*t, "stats", {"--format", "json"}));
  const nlohmann::json b = ParseJsonOutput(CliFor(*t, "stats", {"--json"}));
  ASSERT_TRUE(a.contains("jemalloc")) << a.dump().substr(0, 300);
  std::vector<std::string> keys_a;
  std::vector<std::string> keys_b;
  for (auto it = a.begin(); it != a.end(); ++it) keys_a.push_back(it.key());
  for (auto it = b.begin(); it != b.end(); ++it) keys_b.push_back(it.key());
  EXPECT_EQ(keys_a, keys_b);
  EXPECT_TRUE(CliFor(*t, "stats", {"--format", "raw"}).out.find("Begin jemalloc statistics") !=
              std::string::npos);
}

TEST_F(ExporterTest, ServesEveryLocalTargetAndSurvivesTheirTrouble) {
  TargetProcess* a = StartShape(Shape::kPreloaded);
  TargetProcess* b = StartShape(Shape::kLinked);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  auto exporter = StartExporter({"--listen", "127.0.0.1:0", "--target-timeout", "1s"});
  ASSERT_NE(exporter, nullptr);
  const std::string address = AwaitListening(*exporter);
  ASSERT_FALSE(address.empty()) << exporter->StderrText();

  HttpReply scrape = HttpGet(address, "/metrics");
  ASSERT_EQ(scrape.status, 200) << scrape.headers << scrape.body;
  EXPECT_NE(scrape.headers.find("text/plain; version=0.0.4"), std::string::npos)
      << scrape.headers;
  EXPECT_NE(scrape.body.find(UpLine(a->pid(), "plain_target") + "1\n"), std::string::npos)
      << scrape.body;
  EXPECT_NE(scrape.body.find(UpLine(b->pid(), "linked_target") + "1\n"), std::string::npos)
      << scrape.body;
  EXPECT_NE(scrape.body.find("# TYPE memprof_build_info gauge\nmemprof_build_info{version=\""),
            std::string::npos)
      << scrape.body;
  EXPECT_TRUE(std::regex_search(
      scrape.body, std::regex("\n# TYPE memprof_scrape_duration_seconds gauge\n"
                              "memprof_scrape_duration_seconds [0-9]+\\.[0-9]+\n")))
      << scrape.body;
  ExpectPromtoolAccepts(scrape.body);
  EXPECT_EQ(HttpGet(address, "/metricsx").status, 404);

  // A target that does not answer (stopped) is down, and the scrape still works.
  a->process().Signal(SIGSTOP);
  // kill() returns before the target's threads have stopped: a scrape sent
  // at once could still be answered.
  ASSERT_TRUE(WaitUntil([&] { return IsStopped(a->pid()); }, seconds(10)));
  scrape = HttpGet(address, "/metrics");
  a->process().Signal(SIGCONT);
  ASSERT_EQ(scrape.status, 200);
  EXPECT_NE(scrape.body.find(UpLine(a->pid(), "plain_target") + "0\n"), std::string::npos)
      << scrape.body;
  EXPECT_NE(scrape.body.find(UpLine(b->pid(), "linked_target") + "1\n"), std::string::npos)
      << scrape.body;
  ExpectPromtoolAccepts(scrape.body);

  // A target that is gone (killed: its socket stays, stale) has no series,
  // and the scrape removes its socket.
  const pid_t gone = a->pid();
  const std::string gone_socket = a->socket_path();
  a->process().KillAndReap();
  ASSERT_TRUE(FileExists(gone_socket));
  scrape = HttpGet(address, "/metrics");
  ASSERT_EQ(scrape.status, 200);
  EXPECT_EQ(scrape.body.find("pid=\"" + std::to_string(gone) + "\""), std::string::npos)
      << scrape.body;
  EXPECT_FALSE(FileExists(gone_socket)) << "the scrape left the dead target's socket";
  EXPECT_NE(scrape.body.find(UpLine(b->pid(), "linked_target") + "1\n"), std::string::npos)
      << scrape.body;

  exporter->Signal(SIGTERM);
  auto status = exporter->Wait(seconds(30));
  ASSERT_TRUE(status.has_value()) << "the exporter did not stop on SIGTERM";
  EXPECT_EQ(status->ShellCode(), 0) << exporter->StderrText();
  EXPECT_NE(exporter->StderrText().find("memprofctl exporter: stopped"), std::string::npos);
  EXPECT_EQ(HttpGet(address, "/metrics").status, 0) << "nothing listens any more";
}

TEST_F(ExporterTest, BadListenAddressesAndABusyPort) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> usage = {
      {{"--listen", "0.0.0.0:9464"},
       "--listen 0.0.0.0:9464 is reachable from other hosts, and the exporter has no "
       "authentication"},
      {{"--listen", "127.0.0.1:99999"}, "the port must be a number from 0 to 65535"},
      {{"--listen", "nonsense"}, "invalid listen address 'nonsense': missing ':PORT'"},
      {{"--listen", "example.com:80"}, "host names are not resolved"},
      {{"--target-timeout", "5"}, "--target-timeout: invalid duration '5': missing unit"},
      {{"--target-timeout", "10ms"}, "must be between 100ms and 1m"},
  };
  for (const auto& [args, message] : usage) {
    std::vector<std::string> full = {"exporter"};
    full.insert(full.end(), args.begin(), args.end());
    ExpectCliError(Cli(full, {}, seconds(30)), 2, message);
  }
  auto first = StartExporter({"--listen", "127.0.0.1:0"});
  ASSERT_NE(first, nullptr);
  const std::string address = AwaitListening(*first);
  ASSERT_FALSE(address.empty()) << first->StderrText();
  CommandResult busy = Cli({"exporter", "--listen", address}, {}, seconds(30));
  ExpectCliError(busy, 1, "cannot listen on " + address + ": Address already in use");
  first->Signal(SIGINT);
  auto status = first->Wait(seconds(30));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->ShellCode(), 0) << "SIGINT stops the exporter with exit 0 too";
}

}  // namespace
}  // namespace memprof::integration
