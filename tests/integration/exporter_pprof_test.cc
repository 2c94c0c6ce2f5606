// The exporter's pprof endpoints: /debug/pprof/heap fetched by the
// real pprof from real targets, stripped ones too (through the symbol
// endpoint), its profiling windows, its failures, its index page, and two
// requests for one process at once. And /debug/pprof/allocs: an
// allocation window read by the real pprof, its failures and its busy
// answers.
#include <gtest/gtest.h>
#include <stdio.h>

#include <filesystem>
#include <future>
#include <regex>
#include <sstream>

#include "tests/integration/harness/exporter_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/debian_tools.h"
#include "tests/support/http_client.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using std::chrono::seconds;
using test_support::HttpGet;

constexpr char kServiceTarget[] = MEMPROF_IT_SERVICE_TARGET;
constexpr char kServiceCacheLibrary[] = MEMPROF_IT_SERVICE_CACHE_LIBRARY;
constexpr char kAllocationMixTarget[] = MEMPROF_IT_ALLOCATION_MIX_TARGET;
using test_support::HttpReply;

class ExporterPprofTest : public ExporterTest {
 protected:
  void SetUp() override {
    ExporterTest::SetUp();
    exporter_ = StartExporter({"--listen", "127.0.0.1:0"});
    ASSERT_NE(exporter_, nullptr);
    address_ = AwaitListening(*exporter_);
    ASSERT_FALSE(address_.empty()) << exporter_->StderrText();
  }

  HttpReply Heap(const std::string& query) { return HttpGet(address_, "/debug/pprof/heap" + query); }
  HttpReply Allocs(const std::string& query) {
    return HttpGet(address_, "/debug/pprof/allocs" + query);
  }
  HttpReply Symbol(const TargetProcess& t, const std::string& method, const std::string& body) {
    return test_support::HttpRequest(address_, method, "/debug/pprof/pid/" + Pid(t) + "/symbol",
                                     body);
  }
  static std::string Pid(const TargetProcess& t) { return std::to_string(t.pid()); }

  // many_stacks_target: 64 stacks through ManyStacksAllocate, 256 KiB each,
  // every allocation sampled, then nothing more: a heap that stays put.
  TargetProcess* StartSteadyTarget() {
    TargetOptions options;
    options.argv = {kManyStacksTarget, "--stacks", "64", "--bytes", "262144"};
    options.env = {{"LD_PRELOAD", kAgentPreload},
                   {"MALLOC_CONF", "prof:true,prof_active:true,lg_prof_sample:0"}};
    options.ready_timeout = seconds(60);
    return Start(options);
  }

  // plain_target with jemalloc and an agent, but without prof:true.
  TargetProcess* StartWithoutProfiling() {
    TargetOptions options;
    options.argv = {kPlainTarget};
    options.env = {{"LD_PRELOAD", kAgentPreload}};
    return Start(options);
  }

  // GET `path` with each case's query: its status, its message in the body,
  // as plain text marked for pprof.
  void ExpectFailures(const std::string& path,
                      const std::vector<std::tuple<std::string, int, std::string>>& cases);

  // allocation_mix_target: cache_fill's 64 MiB allocated before it says it
  // is ready, then churn_buffer (256 KiB a millisecond, freed at once) and
  // leak_record (64 KiB every 10 ms, kept).
  TargetProcess* StartAllocationMixTarget(const std::string& malloc_conf) {
    TargetOptions options;
    options.argv = {kAllocationMixTarget};
    options.env = {{"LD_PRELOAD", kAgentPreload}, {"MALLOC_CONF", malloc_conf}};
    options.ready_timeout = seconds(60);
    return Start(options);
  }

  // GET allocs?pid=N&seconds=S in the background, returned once its window
  // has opened (the target starts inactive, and the window activates
  // profiling for its length).
  std::future<HttpReply> AllocationWindowInBackground(TargetProcess& t, int seconds_to_record) {
    const std::string query = "?pid=" + Pid(t) + "&seconds=" + std::to_string(seconds_to_record);
    auto reply = std::async(std::launch::async, [this, query] { return Allocs(query); });
    EXPECT_TRUE(WaitUntil([&] { return StatusJson(t)["profiling_active"] == true; }, seconds(30)))
        << "the allocation window did not open";
    return reply;
  }

  // GET heap?pid=N&seconds=S in the background, returned once its window
  // has opened (Status says active; the target starts inactive).
  std::future<HttpReply> WindowInBackground(TargetProcess& t, int seconds_to_profile) {
    const std::string query = "?pid=" + Pid(t) + "&seconds=" + std::to_string(seconds_to_profile);
    auto reply = std::async(std::launch::async, [this, query] { return Heap(query); });
    EXPECT_TRUE(WaitUntil([&] { return StatusJson(t)["profiling_active"] == true; }, seconds(30)))
        << "the window did not open";
    return reply;
  }

  std::unique_ptr<Subprocess> exporter_;
  std::string address_;
};

std::string Header(const HttpReply& r, const std::string& name) {
  std::smatch m;
  const std::regex line("\r\n" + name + ": ([^\r]*)", std::regex::icase);
  return std::regex_search(r.headers, m, line) ? m[1].str() : "";
}

// Where `symbol`, a function `path` exports, is in process `pid`: its value
// (readelf --dyn-syms) plus where the file's start is mapped; 0 if unknown.
uint64_t AddressInProcess(pid_t pid, const std::string& path, const std::string& symbol) {
  CommandResult symbols = RunCommand({"/usr/bin/readelf", "--dyn-syms", "-W", path}, {});
  std::smatch m;
  const std::regex row(" ([0-9a-f]+) +[0-9]+ FUNC +GLOBAL +DEFAULT +[0-9]+ " + symbol + "\n");
  if (!std::regex_search(symbols.out, m, row)) return 0;
  std::istringstream maps(ReadFile("/proc/" + std::to_string(pid) + "/maps"));
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, file;
    fields >> range >> perms >> offset >> device >> inode >> file;
    if (file == path && std::stoull(offset, nullptr, 16) == 0) {
      return std::stoull(range.substr(0, range.find('-')), nullptr, 16) +
             std::stoull(m[1].str(), nullptr, 16);
    }
  }
  return 0;
}

void ExporterPprofTest::ExpectFailures(
    const std::string& path, const std::vector<std::tuple<std::string, int, std::string>>& cases) {
  for (const auto& [query, status, message] : cases) {
    HttpReply r = HttpGet(address_, path + query);
    EXPECT_EQ(r.status, status) << path << query << "\n" << r.body;
    EXPECT_NE(r.body.find(message), std::string::npos) << path << query << "\n" << r.body;
    EXPECT_NE(Header(r, "Content-Type").find("text/plain"), std::string::npos) << r.headers;
    EXPECT_EQ(Header(r, "X-Go-Pprof"), "1") << r.headers;
  }
}

// A 429 saying `message`, with when to try again.
void ExpectTurnedAway(const HttpReply& r, const std::string& message) {
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_NE(r.body.find(message), std::string::npos) << r.body;
  EXPECT_FALSE(Header(r, "Retry-After").empty()) << r.headers;
}

// The function of the first row of `pprof -top` (the largest flat value).
std::string TopEntry(const std::string& top) {
  std::smatch m;
  const std::regex first_row("flat%[^\n]*\n *[^ ]+ +[^ ]+% +[^ ]+% +[^ ]+ +[^ ]+% +([^\n]+)\n");
  return std::regex_search(top, m, first_row) ? m[1].str() : "";
}

// "of 16777216B total" in pprof -top -unit=B.
double PprofTotal(const std::string& top) {
  std::smatch m;
  if (!std::regex_search(top, m, std::regex("of ([0-9.]+)B total"))) return -1;
  return std::stod(m[1].str());
}

TEST_F(ExporterPprofTest, RealPprofFetchesTheHeapAndItsTotalIsReports) {
  std::string pprof;
  ASSERT_TRUE(test_support::CanRun(test_support::Pprof(MEMPROF_IT_PPROF_TOOL), &pprof));
  TargetProcess* t = StartSteadyTarget();
  ASSERT_NE(t, nullptr);
  HttpReply direct = Heap("?pid=" + Pid(*t));
  ASSERT_EQ(direct.status, 200) << direct.headers << direct.body;
  EXPECT_EQ(Header(direct, "Content-Type"), "application/octet-stream") << direct.headers;
  EXPECT_EQ(Header(direct, "Content-Disposition"), "attachment; filename=\"heap.pb.gz\"");
  EXPECT_TRUE(direct.body.starts_with("\x1f\x8b")) << "gzipped";

  // pprof's own fetch; -symbolize=none: the names must already be in it.
  CommandResult top = RunCommand(
      {pprof, "-top", "-unit=B", "-sample_index=inuse_space", "-symbolize=none",
       "http://" + address_ + "/debug/pprof/heap?pid=" + Pid(*t)},
      {{"HOME", dir().path()}});
  ASSERT_EQ(top.exit_code, 0) << top;
  EXPECT_NE(top.out.find("ManyStacksAllocate"), std::string::npos) << top.out;

  const std::string dump = dir().File("after.heap");
  ASSERT_EQ(CliFor(*t, "dump", {"--out", dump}).exit_code, 0);
  const nlohmann::json report = ParseJsonOutput(Cli({"report", dump, "--format", "json"}));
  const double expected = report["total"].get<double>();
  EXPECT_GE(expected, 64.0 * 262144) << "the 64 blocks are live";
  // The agent's own allocations while it dumps are sampled too: a little noise.
  EXPECT_NEAR(PprofTotal(top.out), expected, expected * 0.02) << top.out;
}

// A real service's files are stripped (Debian strips every package's): its
// profile cannot name the program's own functions, and pprof asks the server
// it fetched the profile from for those names, at the profile's URL with
// "symbol" for its last element (Go's net/http/pprof protocol). Stripped
// copies of service_target and of the library it allocates through.
TEST_F(ExporterPprofTest, RealPprofReadsAStrippedProcessThroughTheSymbolEndpoint) {
  std::string pprof;
  std::string strip;
  ASSERT_TRUE(test_support::CanRun(test_support::Pprof(MEMPROF_IT_PPROF_TOOL), &pprof));
  ASSERT_TRUE(test_support::CanRun(test_support::Strip(), &strip));
  const std::string bin = dir().File("stripped");
  std::filesystem::create_directories(bin);
  const std::string program = bin + "/service_target";
  const std::string library = bin + "/libservice_cache.so";
  std::filesystem::copy_file(kServiceTarget, program);
  std::filesystem::copy_file(kServiceCacheLibrary, library);
  for (const std::string& file : {program, library}) {
    CommandResult stripped = RunCommand({strip, file}, {});
    ASSERT_EQ(stripped.exit_code, 0) << stripped;
  }
  TargetOptions options;  // its library from beside it: $ORIGIN
  options.argv = {program};
  options.env = {{"LD_PRELOAD", kAgentPreload},
                 {"MALLOC_CONF", "prof:true,prof_active:true,lg_prof_sample:12"}};
  TargetProcess* t = Start(options);
  ASSERT_NE(t, nullptr);
  ASSERT_NE(ReadFile("/proc/" + Pid(*t) + "/maps").find(library), std::string::npos);

  // The library's exported function keeps its name (.dynsym); the program's
  // own frames, which pprof asked the exporter about, stay unnamed: pprof
  // shows them as "[service_target]".
  const std::string url = "http://" + address_ + "/debug/pprof/pid/" + Pid(*t) + "/heap";
  CommandResult top;
  EXPECT_TRUE(WaitUntil(
      [&] {
        top = RunCommand({pprof, "-top", "-unit=B", "-sample_index=inuse_space", url},
                         {{"HOME", dir().path()}});
        return top.exit_code == 0 && top.out.find("ServiceCacheAllocate") != std::string::npos;
      },
      seconds(60)))
      << top;
  EXPECT_NE(top.out.find("  [service_target]\n"), std::string::npos) << top.out;
  // The pid in the query: pprof's symbol requests go to /debug/pprof/symbol,
  // which names nothing, and pprof shows the same.
  CommandResult by_query = RunCommand({pprof, "-top", "-unit=B", "-sample_index=inuse_space",
                                       "http://" + address_ + "/debug/pprof/heap?pid=" + Pid(*t)},
                                      {{"HOME", dir().path()}});
  EXPECT_EQ(by_query.exit_code, 0) << by_query;
  EXPECT_NE(by_query.out.find("ServiceCacheAllocate"), std::string::npos) << by_query.out;

  // The symbol endpoint names an address of the live, stripped library.
  const uint64_t exported = AddressInProcess(t->pid(), library, "ServiceCacheAllocate");
  ASSERT_NE(exported, 0u);
  std::ostringstream hex;
  hex << "0x" << std::hex << exported;
  HttpReply named = Symbol(*t, "POST", hex.str() + "+0x1");
  EXPECT_EQ(named.status, 200) << named.body;
  EXPECT_EQ(named.body, hex.str() + " ServiceCacheAllocate\n") << "nothing at 0x1";
  EXPECT_EQ(Symbol(*t, "GET", "").body, "num_symbols: 1\n");
}

TEST_F(ExporterPprofTest, SecondsProfilesAWindowAndPutsTheStateBack) {
  std::string pprof;
  ASSERT_TRUE(test_support::CanRun(test_support::Pprof(MEMPROF_IT_PPROF_TOOL), &pprof));
  TargetProcess* t = StartShape(Shape::kPreloaded);  // profiling ready, inactive
  ASSERT_NE(t, nullptr);
  HttpReply inactive = Heap("?pid=" + Pid(*t));
  EXPECT_EQ(inactive.status, 409) << inactive.body;
  EXPECT_NE(inactive.body.find("profiling is not active in pid " + Pid(*t)), std::string::npos)
      << inactive.body;
  EXPECT_NE(inactive.body.find("/debug/pprof/pid/" + Pid(*t) + "/heap?seconds=S"),
            std::string::npos)
      << inactive.body;

  HttpReply window = Heap("?pid=" + Pid(*t) + "&seconds=1");
  ASSERT_EQ(window.status, 200) << window.body;
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false) << "switched off again, as it was";
  const std::string file = dir().File("window.pb.gz");
  ASSERT_TRUE(WriteFile(file, window.body));
  CommandResult top = RunCommand({pprof, "-top", "-symbolize=none", file}, {{"HOME", dir().path()}});
  EXPECT_EQ(top.exit_code, 0) << top;

  // Active before: it stays active.
  ASSERT_EQ(CliFor(*t, "activate").exit_code, 0);
  ASSERT_EQ(Heap("?pid=" + Pid(*t) + "&seconds=1").status, 200);
  EXPECT_EQ(StatusJson(*t)["profiling_active"], true);
  EXPECT_EQ(Heap("?pid=" + Pid(*t)).status, 200) << "active: what has been sampled so far";
}

TEST_F(ExporterPprofTest, EachFailureHasItsStatusAndSaysWhatToDo) {
  TargetProcess* ready = StartShape(Shape::kPreloaded);
  TargetProcess* off = StartWithoutProfiling();
  TargetProcess* no_agent = StartWithoutAgent();
  ASSERT_NE(ready, nullptr);
  ASSERT_NE(off, nullptr);
  ASSERT_NE(no_agent, nullptr);
  ExpectFailures("/debug/pprof/heap",
                 {
                     {"", 400, "no pid: ask /debug/pprof/pid/N/heap (or /debug/pprof/heap?pid=N)"},
                     {"?pid=abc", 400, "pid=abc is not a process id"},
                     {"?pid=" + Pid(*ready) + "&seconds=0", 400,
                      "seconds=0: must be a whole number of seconds from 1 to 300"},
                     {"?pid=" + Pid(*ready) + "&seconds=301", 400, "from 1 to 300"},
                     {"?pid=" + Pid(*no_agent), 404, "has no memprof agent"},
                     // jemalloc without prof:true: memprof's sampler, not yet active,
                     // as for a jemalloc target that samples.
                     {"?pid=" + Pid(*off), 409, "profiling is not active in pid " + Pid(*off)},
                 });
  // A socket named after one pid but served by another: refused (SO_PEERCRED).
  ASSERT_EQ(::rename(ready->socket_path().c_str(), no_agent->socket_path().c_str()), 0);
  HttpReply forged = Heap("?pid=" + Pid(*no_agent));
  EXPECT_EQ(forged.status, 403) << forged.body;
  EXPECT_NE(forged.body.find("is not served by pid " + Pid(*no_agent)), std::string::npos)
      << forged.body;
}

TEST_F(ExporterPprofTest, ATargetThatDiesDuringItsWindowIsA502) {
  TargetProcess* t = StartShape(Shape::kPreloaded);
  ASSERT_NE(t, nullptr);
  auto request = WindowInBackground(*t, 20);
  t->process().KillAndReap();
  HttpReply died = request.get();
  EXPECT_EQ(died.status, 502) << died.body;
  EXPECT_NE(died.body.find("exited"), std::string::npos) << died.body;
}

TEST_F(ExporterPprofTest, ASecondRequestForOnePidIsTurnedAwayWithRetryAfter) {
  TargetProcess* t = StartShape(Shape::kPreloaded);
  ASSERT_NE(t, nullptr);
  const std::string pid = Pid(*t);
  auto first = WindowInBackground(*t, 3);
  HttpReply second = Heap("?pid=" + pid + "&seconds=1");
  ExpectTurnedAway(second, "a heap profile of pid " + pid + " is already being taken");
  HttpReply scrape = HttpGet(address_, "/metrics");
  EXPECT_EQ(scrape.status, 200) << "the metrics are served meanwhile";
  EXPECT_EQ(first.get().status, 200);
  EXPECT_EQ(Heap("?pid=" + pid + "&seconds=1").status, 200) << "and afterwards it is free again";
}

// What allocation_mix_target allocates during a 2 s window, as the real
// pprof reads it from the exporter: churn_buffer allocates the most bytes,
// and cache_fill, done before the window, allocates nothing in it.
TEST_F(ExporterPprofTest, RealPprofReadsAnAllocationWindow) {
  std::string pprof;
  ASSERT_TRUE(test_support::CanRun(test_support::Pprof(MEMPROF_IT_PPROF_TOOL), &pprof));
  TargetProcess* t = StartAllocationMixTarget("prof:true");
  ASSERT_NE(t, nullptr);
  // pprof waits 1.5 x seconds by default: the fetch and symbolization after
  // the window may need more on a loaded machine.
  const std::string url =
      "http://" + address_ + "/debug/pprof/pid/" + Pid(*t) + "/allocs?seconds=2";
  CommandResult top =
      RunCommand({pprof, "-top", "-timeout", "60", "-sample_index=alloc_space", url},
                 {{"HOME", dir().path()}});
  ASSERT_EQ(top.exit_code, 0) << top;
  EXPECT_EQ(TopEntry(top.out), "churn_buffer") << top.out;
  EXPECT_NE(top.out.find("leak_record"), std::string::npos) << top.out;
  EXPECT_EQ(top.out.find("cache_fill"), std::string::npos) << "allocated before the window\n"
                                                           << top.out;

  HttpReply direct = Allocs("?pid=" + Pid(*t) + "&seconds=1");
  ASSERT_EQ(direct.status, 200) << direct.headers << direct.body;
  EXPECT_EQ(Header(direct, "Content-Type"), "application/octet-stream") << direct.headers;
  EXPECT_EQ(Header(direct, "Content-Disposition"), "attachment; filename=\"allocs.pb.gz\"");
  EXPECT_TRUE(direct.body.starts_with("\x1f\x8b")) << "gzipped";
  const std::string file = dir().File("allocs.pb.gz");
  ASSERT_TRUE(WriteFile(file, direct.body));
  CommandResult types = RunCommand({pprof, "-raw", file}, {{"HOME", dir().path()}});
  ASSERT_EQ(types.exit_code, 0) << types;
  // Go's allocs profile's sample types, alloc_space its default.
  EXPECT_NE(types.out.find("alloc_objects/count alloc_space/bytes[dflt] inuse_objects/count "
                           "inuse_space/bytes"),
            std::string::npos)
      << types.out.substr(0, 2000);
}

TEST_F(ExporterPprofTest, AllocsFailuresHaveTheHeapEndpointsCodes) {
  TargetProcess* ready = StartShape(Shape::kPreloaded);
  TargetProcess* off = StartWithoutProfiling();
  TargetProcess* no_agent = StartWithoutAgent();
  ASSERT_NE(ready, nullptr);
  ASSERT_NE(off, nullptr);
  ASSERT_NE(no_agent, nullptr);
  ExpectFailures(
      "/debug/pprof/allocs",
      {
          {"", 400, "no pid: ask /debug/pprof/pid/N/allocs (or /debug/pprof/allocs?pid=N)"},
          {"?pid=" + Pid(*ready) + "&seconds=0", 400,
           "seconds=0: must be a whole number of seconds from 1 to 300"},
          {"?pid=" + Pid(*ready) + "&seconds=301", 400,
           "seconds=301: must be a whole number of seconds from 1 to 300"},
          {"?pid=" + Pid(*no_agent) + "&seconds=1", 404, "has no memprof agent"},
      });
  // jemalloc without prof:true is no failure: memprof's own sampler records the window.
  HttpReply sampled = test_support::HttpRequest(
      address_, "GET", "/debug/pprof/allocs?pid=" + Pid(*off) + "&seconds=1", "");
  EXPECT_EQ(sampled.status, 200) << sampled.body;
  HttpReply head =
      test_support::HttpRequest(address_, "HEAD", "/debug/pprof/allocs?pid=" + Pid(*ready), "");
  EXPECT_EQ(head.status, 405) << "a HEAD would still open a window";
}

// One allocation window per process: a second request while the exporter's
// runs is turned away by the exporter, one while another client's runs by
// the agent; both are 429. A heap profile of the same process still goes.
TEST_F(ExporterPprofTest, ASecondAllocationWindowForOnePidIsA429) {
  TargetProcess* t = StartAllocationMixTarget(kProfilingReadyConf);
  ASSERT_NE(t, nullptr);
  const std::string pid = Pid(*t);
  auto first = AllocationWindowInBackground(*t, 3);
  HttpReply second = Allocs("?pid=" + pid + "&seconds=1");
  ExpectTurnedAway(second, "an allocation profile of pid " + pid + " is already being taken");
  EXPECT_EQ(Heap("?pid=" + pid).status, 200) << "a heap profile beside it (profiling is active)";
  EXPECT_EQ(first.get().status, 200);
  EXPECT_TRUE(WaitUntil([&] { return StatusJson(*t)["profiling_active"] == false; }, seconds(30)))
      << "the window put profiling back";

  std::unique_ptr<Subprocess> cli = SpawnCli({"profile", "--pid", pid, "--duration", "5s",
                                              "--allocations", "--out", dir().File("cli.allocs")});
  ASSERT_NE(cli, nullptr);
  ASSERT_TRUE(WaitUntil([&] { return StatusJson(*t)["profiling_active"] == true; }, seconds(30)))
      << cli->StderrText();
  HttpReply busy = Allocs("?pid=" + pid + "&seconds=1");
  ExpectTurnedAway(busy, "is already open");
  auto done = cli->Wait(seconds(60));
  ASSERT_TRUE(done);
  EXPECT_EQ(done->exit_code, 0) << cli->StderrText();
}

TEST_F(ExporterPprofTest, ATargetThatDiesDuringItsAllocationWindowIsA502) {
  TargetProcess* t = StartAllocationMixTarget(kProfilingReadyConf);
  ASSERT_NE(t, nullptr);
  auto request = AllocationWindowInBackground(*t, 20);
  t->process().KillAndReap();
  HttpReply died = request.get();
  EXPECT_EQ(died.status, 502) << died.body;
  EXPECT_NE(died.body.find("exited while its allocation profile was being taken"),
            std::string::npos)
      << died.body;
}

TEST_F(ExporterPprofTest, TheIndexAndLandingPageLinkTheTargetsAndEscapeTheirCommandLines) {
  TargetOptions hostile = {};
  hostile.argv = {kPlainTarget, "<script>alert('x')</script>&\"quoted\""};
  hostile.env = {{"LD_PRELOAD", kAgentPreload}, {"MALLOC_CONF", kProfilingReadyConf}};
  TargetProcess* t = Start(hostile);
  ASSERT_NE(t, nullptr);
  HttpReply index = HttpGet(address_, "/debug/pprof/");
  ASSERT_EQ(index.status, 200) << index.body;
  EXPECT_EQ(Header(index, "Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(index.body.find("<td>" + Pid(*t) + "</td><td>plain_target</td>"), std::string::npos)
      << index.body;
  EXPECT_NE(index.body.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;quoted&quot;"),
            std::string::npos)
      << index.body;
  EXPECT_EQ(index.body.find("<script>"), std::string::npos) << index.body;
  EXPECT_NE(index.body.find("<td>inactive</td>"), std::string::npos) << index.body;
  EXPECT_NE(index.body.find("<a href=\"/debug/pprof/pid/" + Pid(*t) + "/heap\">"),
            std::string::npos)
      << index.body;
  HttpReply landing = HttpGet(address_, "/");
  ASSERT_EQ(landing.status, 200);
  EXPECT_NE(index.body.find("<a href=\"/debug/pprof/pid/" + Pid(*t) + "/allocs\">"),
            std::string::npos)
      << index.body;
  for (const char* link : {"href=\"/metrics\"", "href=\"/debug/pprof/\"", "/debug/pprof/pid/N/heap",
                           "/debug/pprof/pid/N/symbol", "/debug/pprof/heap?pid=N&amp;seconds=S",
                           "/debug/pprof/pid/N/allocs?seconds=S"}) {
    EXPECT_NE(landing.body.find(link), std::string::npos) << link << "\n" << landing.body;
  }
}

}  // namespace
}  // namespace memprof::integration
