// Periodic collection: `dump --every ... --out-dir` and
// `stats --watch`, driving the real memprofctl against real jemalloc targets.
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <filesystem>
#include <regex>
#include <sstream>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/occurrences.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::vector<json> JsonLines(const std::string& text) {
  std::vector<json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not a JSON line: " << line;
    if (!j.is_discarded()) lines.push_back(std::move(j));
  }
  return lines;
}

size_t LineCount(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

class CollectTest : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    ASSERT_FALSE(HasFatalFailure());
    out_dir_ = dir().File("out");
    ASSERT_EQ(::mkdir(out_dir_.c_str(), 0700), 0);
  }

  TargetProcess* StartActiveTarget() {
    TargetProcess* t = StartShape(Shape::kPreloaded);
    if (t != nullptr) {
      EXPECT_EQ(CliFor(*t, "activate").exit_code, 0);
    }
    return t;
  }


  // Waits (with a deadline) until the background command printed `lines` lines.
  bool AwaitLines(Subprocess& p, size_t lines) {
    return WaitUntil([&] { return LineCount(p.StdoutText()) >= lines || p.HasExited(); },
                     seconds(60)) &&
           LineCount(p.StdoutText()) >= lines;
  }

  std::vector<std::string> OutFiles() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(out_dir_)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  // Every file in the output directory is a dump that a JSON line reported,
  // complete (size and SHA-256 as reported), and vice versa.
  void ExpectFilesMatchTheLines(const std::vector<json>& lines, const std::string& ext = "heap") {
    std::vector<std::string> reported;
    const std::regex name("[A-Za-z0-9_-]+-[0-9]+-[0-9]{8}T[0-9]{6}Z(-[0-9]+)?\\." + ext);
    for (const json& j : lines) {
      const std::string path = j["path"];
      ASSERT_TRUE(path.starts_with(out_dir_ + "/")) << path;
      const std::string file = path.substr(out_dir_.size() + 1);
      EXPECT_TRUE(std::regex_match(file, name)) << file;
      const std::string data = ReadFile(path);
      EXPECT_EQ(j["size_bytes"], data.size()) << path;
      EXPECT_EQ(j["sha256"], Sha256Hex(data)) << path;
      reported.push_back(file);
    }
    std::sort(reported.begin(), reported.end());
    EXPECT_EQ(OutFiles(), reported) << "files that no JSON line reported (partial or temp?)";
  }

  std::string out_dir_;
};

TEST_F(CollectTest, EveryWritesCountTimestampedVerifiedDumps) {
  TargetProcess* t = StartActiveTarget();
  ASSERT_NE(t, nullptr);
  CommandResult r = CliFor(*t, "dump", {"--every", "1s", "--count", "3", "--out-dir", out_dir_,
                                        "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r;
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["sequence"], i + 1);
    EXPECT_EQ(lines[i]["pid"], t->pid());
    EXPECT_EQ(lines[i]["format"], "heap");
    EXPECT_TRUE(ReadFile(lines[i]["path"]).starts_with("heap_v2/"));
    struct stat st {};
    ASSERT_EQ(::stat(lines[i]["path"].get<std::string>().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
  ExpectFilesMatchTheLines(lines);
  EXPECT_EQ(StatusJson(*t)["dumps_served"], 3);
}

TEST_F(CollectTest, HumanProgressGoesToStderrAndAReportFormatGetsItsExtension) {
  TargetProcess* t = StartActiveTarget();
  ASSERT_NE(t, nullptr);
  CommandResult r = CliFor(*t, "dump", {"--every", "1s", "--count", "2", "--out-dir", out_dir_,
                                        "--format", "collapsed"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("[1/2]"), std::string::npos) << r;
  EXPECT_NE(r.err.find("[2/2]"), std::string::npos) << r;
  const auto files = OutFiles();
  ASSERT_EQ(files.size(), 2u);
  for (const std::string& f : files) {
    EXPECT_TRUE(f.ends_with(".collapsed")) << f;
    EXPECT_NE(r.err.find(out_dir_ + "/" + f), std::string::npos) << r;
  }
}

TEST_F(CollectTest, OutDirNeverOverwritesAnExistingFile) {
  TargetProcess* t = StartActiveTarget();
  ASSERT_NE(t, nullptr);
  // Occupy every name the dump could get in the next minute.
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof(host) - 1), 0);
  std::string safe = std::string(host).substr(0, std::string(host).find('.'));
  for (char& c : safe) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  }
  const auto now = std::chrono::system_clock::now();
  std::vector<std::string> precious;
  for (int s = -5; s < 60; ++s) {
    const std::time_t at = std::chrono::system_clock::to_time_t(now + seconds(s));
    std::tm utc{};
    gmtime_r(&at, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &utc);
    const std::string name =
        (safe.empty() ? "host" : safe) + "-" + std::to_string(t->pid()) + "-" + stamp + ".heap";
    ASSERT_TRUE(WriteFile(out_dir_ + "/" + name, "precious " + name));
    precious.push_back(name);
  }
  CommandResult r = CliFor(*t, "dump", {"--out-dir", out_dir_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  for (const std::string& name : precious) {
    EXPECT_EQ(ReadFile(out_dir_ + "/" + name), "precious " + name);
  }
  const auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 1u);
  const std::string path = lines[0]["path"];
  EXPECT_TRUE(path.ends_with("-1.heap")) << path;
  EXPECT_TRUE(ReadFile(path).starts_with("heap_v2/"));
  EXPECT_EQ(OutFiles().size(), precious.size() + 1);
}

TEST_F(CollectTest, SigintBetweenDumpsStopsWithExit0AndKeepsCompleteFiles) {
  TargetProcess* t = StartActiveTarget();
  ASSERT_NE(t, nullptr);
  auto cli = SpawnCli({"dump", "--pid", std::to_string(t->pid()), "--every", "1s", "--out-dir",
                       out_dir_, "--json"});
  ASSERT_NE(cli, nullptr);
  ASSERT_TRUE(AwaitLines(*cli, 2)) << cli->StderrText();
  cli->Signal(SIGINT);
  auto status = cli->Wait(seconds(30));
  ASSERT_TRUE(status.has_value()) << "memprofctl did not stop on SIGINT";
  EXPECT_EQ(status->ShellCode(), 0) << cli->StderrText();
  const auto lines = JsonLines(cli->StdoutText());
  EXPECT_GE(lines.size(), 2u);
  ExpectFilesMatchTheLines(lines);
}

TEST_F(CollectTest, SigtermDuringADumpDiscardsItAndExits0) {
  TargetProcess* t = StartBigDumpTarget();
  ASSERT_NE(t, nullptr);
  auto cli = SpawnCli({"dump", "--pid", std::to_string(t->pid()), "--every", "1m", "--out-dir",
                       out_dir_, "--json"});
  ASSERT_NE(cli, nullptr);
  // Data flows into memprofctl's unnamed file in the output directory, seen
  // through its fds; then the target is frozen, so the dump is mid-stream.
  auto temp_has_data = [&] {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(
             "/proc/" + std::to_string(cli->pid()) + "/fd", ec)) {
      const std::string target = std::filesystem::read_symlink(e.path(), ec).string();
      struct stat st {};
      if (target.starts_with(out_dir_ + "/#") && ::stat(e.path().c_str(), &st) == 0 &&
          st.st_size > 0) {
        return true;
      }
    }
    return false;
  };
  ASSERT_TRUE(WaitUntil([&] { return temp_has_data() || cli->HasExited(); }, seconds(60),
                        milliseconds(1)));
  t->process().Signal(SIGSTOP);
  ASSERT_FALSE(cli->HasExited()) << cli->StderrText();
  cli->Signal(SIGTERM);
  auto status = cli->Wait(seconds(30));
  t->process().Signal(SIGCONT);
  ASSERT_TRUE(status.has_value()) << "memprofctl hangs on SIGTERM during a dump";
  EXPECT_EQ(status->ShellCode(), 0) << cli->StderrText();
  EXPECT_EQ(cli->StdoutText(), "") << "the interrupted dump is not reported";
  EXPECT_EQ(OutFiles(), std::vector<std::string>{}) << "no partial file";
}

TEST_F(CollectTest, TargetDyingEndsThePeriodicDumpWithExit3KeepingTheFiles) {
  TargetProcess* t = StartActiveTarget();
  ASSERT_NE(t, nullptr);
  const pid_t pid = t->pid();
  auto cli = SpawnCli(
      {"dump", "--pid", std::to_string(pid), "--every", "1s", "--out-dir", out_dir_, "--json"});
  ASSERT_NE(cli, nullptr);
  ASSERT_TRUE(AwaitLines(*cli, 1)) << cli->StderrText();
  t->process().KillAndReap();
  auto status = cli->Wait(seconds(30));
  ASSERT_TRUE(status.has_value()) << "memprofctl hangs on a dead target";
  EXPECT_EQ(status->ShellCode(), 3) << cli->StderrText();
  const std::string err = cli->StderrText();
  EXPECT_TRUE(err.starts_with("memprofctl: error: pid " + std::to_string(pid) +
                              " (plain_target) has gone away"))
      << err;
  EXPECT_TRUE(std::regex_search(err, std::regex("stopped after [0-9]+ dumps?, kept in " +
                                                out_dir_)))
      << err;
  ExpectFilesMatchTheLines(JsonLines(cli->StdoutText()));
  EXPECT_FALSE(OutFiles().empty());
}

TEST_F(CollectTest, BadPeriodicDumpInputIsRefusedBeforeAnyDump) {
  TargetProcess* t = StartActiveTarget();
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(WriteFile(dir().File("plain-file"), "x"));
  const std::string p = std::to_string(t->pid());
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--every", "30", "--out-dir", out_dir_}, 2,
       "--every: invalid duration '30': missing unit; use a number with a unit, e.g. 30s"},
      {{"--every", "0s", "--out-dir", out_dir_}, 2,
       "invalid duration '0s': must be between 1s and 24h"},
      {{"--every", "25h", "--out-dir", out_dir_}, 2, "must be between 1s and 24h"},
      {{"--every", "1s", "--count", "0", "--out-dir", out_dir_}, 2,
       "invalid count '0': expected a whole number from 1 to 1000000"},
      {{"--every", "1s", "--count", "-1", "--out-dir", out_dir_}, 2, "invalid count '-1'"},
      {{"--every", "1s", "--count", "two", "--out-dir", out_dir_}, 2, "invalid count 'two'"},
      {{"--every", "1s", "--out", dir().File("x.heap")}, 2, "--every requires --out-dir"},
      {{"--count", "3", "--out-dir", out_dir_}, 2, "--count requires --every"},
      {{"--out", dir().File("x.heap"), "--out-dir", out_dir_}, 2, "dump: --out excludes --out-dir"},
      {{"--every", "1s", "--out-dir", out_dir_ + "/missing"}, 2,
       "--out-dir '" + out_dir_ + "/missing' does not exist; create it first"},
      {{"--every", "1s", "--out-dir", dir().File("plain-file")}, 2, "is not a directory"},
      {{"--every", "1s", "--out-dir", "/sys"}, 4,
       "cannot write into --out-dir '/sys' (cannot create a file in directory '/sys'"},
      {{"--every", "1s", "--out-dir", out_dir_, "--format", "flame"}, 2,
       "unknown dump format 'flame' (valid: heap, text, collapsed, pprof, svg, json)"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"dump", "--pid", p};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CommandResult r = Cli(args);
    ExpectCliError(r, c.exit_code, c.message);
  }
  EXPECT_EQ(OutFiles(), std::vector<std::string>{}) << "nothing may be left behind";
  EXPECT_EQ(StatusJson(*t)["dumps_served"], 0) << "bad input must not reach the agent";
  EXPECT_EQ(NonSocketEntries(), (std::vector<std::string>{"out", "plain-file"}));
}

// --- stats --watch -------------------------------------------------------

TEST_F(CollectTest, WatchPrintsJsonLinesWithDeltasOnAPipe) {
  TargetProcess* t = StartShape(Shape::kPreloaded);
  ASSERT_NE(t, nullptr);
  CommandResult r = CliFor(*t, "stats", {"--watch", "1s", "--count", "3"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r;
  const char* kKeys[] = {"allocated", "active", "resident", "mapped", "retained", "metadata",
                         "rss_bytes"};
  for (size_t i = 0; i < lines.size(); ++i) {
    const json& j = lines[i];
    EXPECT_EQ(j["pid"], t->pid());
    EXPECT_EQ(j["allocator"], "jemalloc");
    EXPECT_EQ(j["sample"], i + 1);
    EXPECT_TRUE(j["unix_ms"].is_number_integer()) << j;
    EXPECT_TRUE(j["interval_seconds"].is_number_float()) << j;
    for (const char* key : kKeys) {
      EXPECT_TRUE(j[key].is_number_unsigned()) << key << " " << j;
      EXPECT_TRUE(j["delta"][key].is_number_integer()) << key << " " << j;
      EXPECT_TRUE(j["per_second"][key].is_number_float()) << key << " " << j;
      if (i == 0) {
        EXPECT_EQ(j["delta"][key], 0) << key;
        continue;
      }
      const int64_t expected =
          j[key].get<int64_t>() - lines[i - 1][key].get<int64_t>();
      EXPECT_EQ(j["delta"][key].get<int64_t>(), expected) << key;
    }
    if (i > 0) {
      EXPECT_GT(j["interval_seconds"].get<double>(), 0.5) << j;
    }
  }
  EXPECT_GT(lines[0]["allocated"].get<int64_t>(), 4 << 20) << "the target keeps 4 MiB live";
}

TEST_F(CollectTest, CtrlCEndsTheWatchWithExit0) {
  TargetProcess* t = StartShape(Shape::kLinked);
  ASSERT_NE(t, nullptr);
  auto cli = SpawnCli({"stats", "--pid", std::to_string(t->pid()), "--watch", "1s"});
  ASSERT_NE(cli, nullptr);
  ASSERT_TRUE(AwaitLines(*cli, 2)) << cli->StderrText();
  cli->Signal(SIGINT);
  auto status = cli->Wait(seconds(30));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->ShellCode(), 0) << cli->StderrText();
  EXPECT_EQ(cli->StderrText(), "");
  EXPECT_GE(JsonLines(cli->StdoutText()).size(), 2u);
}

TEST_F(CollectTest, TargetDyingEndsTheWatchWithExit3) {
  TargetProcess* t = StartShape(Shape::kPreloaded);
  ASSERT_NE(t, nullptr);
  const pid_t pid = t->pid();
  auto cli = SpawnCli({"stats", "--pid", std::to_string(pid), "--watch", "1s"});
  ASSERT_NE(cli, nullptr);
  ASSERT_TRUE(AwaitLines(*cli, 1)) << cli->StderrText();
  t->process().KillAndReap();
  auto status = cli->Wait(seconds(30));
  ASSERT_TRUE(status.has_value()) << "stats --watch hangs on a dead target";
  EXPECT_EQ(status->ShellCode(), 3) << cli->StderrText();
  EXPECT_TRUE(cli->StderrText().starts_with("memprofctl: error: pid " + std::to_string(pid) +
                                            " (plain_target) has gone away"))
      << cli->StderrText();
  EXPECT_GE(JsonLines(cli->StdoutText()).size(), 1u) << "what was printed stays";
}

// Runs memprofctl ARGS with a pseudo-terminal as stdout and stderr; returns
// everything it wrote and its exit status (-1 on a harness failure).
std::pair<std::string, int> RunOnATerminal(const std::vector<std::string>& args,
                                           const std::string& socket_dir,
                                           const char* term = "xterm-256color") {
  int master = -1;
  const pid_t child = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (child < 0) return {"forkpty failed", -1};
  if (child == 0) {
    ::setenv("MEMPROF_SOCKET_DIR", socket_dir.c_str(), 1);
    ::setenv("TERM", term, 1);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(kMemprofctl));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(kMemprofctl, argv.data());
    ::_exit(127);
  }
  std::string output;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 1000) < 0) break;
    if (p.revents == 0) continue;
    const ssize_t n = ::read(master, buf, sizeof(buf));
    if (n <= 0) break;  // EIO once the child has exited and closed the tty
    output.append(buf, static_cast<size_t>(n));
  }
  ::close(master);
  ::kill(child, SIGKILL);  // no-op when it has exited
  int status = 0;
  ::waitpid(child, &status, 0);
  return {output, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)};
}

TEST_F(CollectTest, WatchOnATerminalRedrawsALiveTableInPlace) {
  TargetProcess* t = StartShape(Shape::kPreloaded);
  ASSERT_NE(t, nullptr);
  const auto [text, code] = RunOnATerminal(
      {"stats", "--pid", std::to_string(t->pid()), "--watch", "1s", "--count", "3"}, SocketDir());
  EXPECT_EQ(code, 0) << text;
  EXPECT_NE(text.find("(plain_target), jemalloc: sample 1 at "), std::string::npos) << text;
  EXPECT_NE(text.find("jemalloc: sample 3 at "), std::string::npos) << text;
  // Two redraws, each moving the cursor up over the 10-line frame before it.
  EXPECT_EQ(test_support::CountOccurrences(text, "\x1b[10F\x1b[J"), 2u) << text;
  EXPECT_EQ(text.find('{'), std::string::npos) << "a table, not JSON, on a terminal\n" << text;
  for (const char* row : {"allocated", "resident", "retained", "RSS", "PER SECOND"}) {
    EXPECT_NE(text.find(row), std::string::npos) << row;
  }
}

// A terminal that cannot move the cursor (Emacs' shell, TERM=dumb): one
// table after another, and not one escape sequence.
TEST_F(CollectTest, WatchOnADumbTerminalPrintsTablesWithoutEscapes) {
  TargetProcess* t = StartShape(Shape::kPreloaded);
  ASSERT_NE(t, nullptr);
  const auto [text, code] = RunOnATerminal(
      {"stats", "--pid", std::to_string(t->pid()), "--watch", "1s", "--count", "2"}, SocketDir(),
      "dumb");
  EXPECT_EQ(code, 0) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("jemalloc: sample 1 at "), std::string::npos) << text;
  EXPECT_NE(text.find("jemalloc: sample 2 at "), std::string::npos) << text;
  EXPECT_EQ(text.find('{'), std::string::npos) << "a person reads it: tables, not JSON\n" << text;
}

TEST_F(CollectTest, BadWatchInputIsAUsageError) {
  TargetProcess* t = StartShape(Shape::kPreloaded);
  ASSERT_NE(t, nullptr);
  const std::string p = std::to_string(t->pid());
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--watch", "2"}, "--watch: invalid duration '2': missing unit"},
      {{"--watch", "0s"}, "invalid duration '0s': must be between 1s and 1h"},
      {{"--watch", "2h"}, "must be between 1s and 1h"},
      {{"--watch", "1s", "--count", "0"}, "invalid count '0': expected a whole number from 1"},
      {{"--count", "3"}, "--count requires --watch"},
      {{"--watch", "1s", "--format", "prometheus"},
       "--watch shows a table or JSON lines; it cannot be combined with --format prometheus"},
      {{"--watch", "1s", "--raw"}, "cannot be combined with --format raw"},
      {{"--format", "yaml"}, "unknown stats format 'yaml' (valid: table, json, raw, prometheus)"},
      {{"--format", "json", "--json"}, "stats: --json excludes --format"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> full = {"stats", "--pid", p};
    full.insert(full.end(), args.begin(), args.end());
    ExpectCliError(Cli(full), 2, message);
  }
}

}  // namespace
}  // namespace memprof::integration
