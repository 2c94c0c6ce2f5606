// Issue 3, load: 32 concurrent memprofctl clients doing status, stats and
// dump against one busy target for MEMPROF_LOAD_SECONDS (8 s in CI, 60 s for
// the full-length run): no failed call, every dump a valid, verified file of
// its own, and afterwards the target's threads, descriptors and RSS back
// where they were. The figures go to stdout for docs/performance.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/harness/load_fault_fixture.h"

namespace memprof::integration {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kClients = 32;
// Every fourth client dumps (8), every other one of the rest asks for stats
// (8), and the remaining 16 ask for status.
constexpr int kDumpEvery = 4;
constexpr auto kCallTimeout = seconds(60);
enum class CallKind { kStatus, kStats, kDump };

const char* KindName(CallKind kind) {
  switch (kind) {
    case CallKind::kStatus: return "status";
    case CallKind::kStats: return "stats";
    case CallKind::kDump: return "dump";
  }
  return "?";
}

CallKind KindOfClient(int client) {
  if (client % kDumpEvery == 0) return CallKind::kDump;
  return client % 2 == 0 ? CallKind::kStats : CallKind::kStatus;
}

struct CallRecord {
  CallKind kind = CallKind::kStatus;
  milliseconds elapsed{0};
  std::string failure;  // empty when the call succeeded
  std::string path;     // dumps: the file, its size and SHA-256 as reported
  uint64_t size_bytes = 0;
  std::string sha256;
};

// Checks what one call printed; returns why it failed, or "".
std::string CheckOutput(CallKind kind, const CommandResult& r, pid_t pid, CallRecord& rec) {
  if (r.exit_code != 0) return "exit " + std::to_string(r.exit_code) + ": " + r.err;
  json j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return "stdout is not a JSON object: " + r.out.substr(0, 200);
  if (kind == CallKind::kStats) {
    bool ok = j.contains("allocated") && j["allocated"].is_number_unsigned() && j.contains("jemalloc");
    return ok ? "" : "not jemalloc statistics: " + r.out.substr(0, 200);
  }
  if (j.value("pid", 0) != pid) return "wrong pid in " + r.out.substr(0, 200);
  if (kind == CallKind::kDump) {
    rec.size_bytes = j.value("size_bytes", uint64_t{0});
    rec.sha256 = j.value("sha256", std::string());
  }
  return "";
}

// The load: each client thread runs its kind of call back to back until the
// deadline.
class LoadRunner {
 public:
  using Cli = std::function<CommandResult(std::vector<std::string>)>;

  LoadRunner(Cli cli, pid_t pid, std::string out_dir)
      : cli_(std::move(cli)), pid_(pid), out_dir_(std::move(out_dir)) {}

  std::vector<CallRecord> Run(seconds duration) {
    const auto deadline = std::chrono::steady_clock::now() + duration;
    std::vector<std::vector<CallRecord>> per_client(kClients);
    std::vector<std::thread> threads;
    for (int c = 0; c < kClients; ++c) {
      threads.emplace_back([this, c, deadline, &per_client] { Client(c, deadline, per_client[c]); });
    }
    for (std::thread& t : threads) t.join();
    std::vector<CallRecord> all;
    for (auto& v : per_client) all.insert(all.end(), v.begin(), v.end());
    return all;
  }

 private:
  void Client(int client, std::chrono::steady_clock::time_point deadline,
              std::vector<CallRecord>& out) {
    const CallKind kind = KindOfClient(client);
    for (int i = 0; std::chrono::steady_clock::now() < deadline; ++i) {
      CallRecord rec;
      rec.kind = kind;
      std::vector<std::string> args = {KindName(kind), "--pid", std::to_string(pid_), "--json"};
      if (kind == CallKind::kDump) {
        rec.path = out_dir_ + "/c" + std::to_string(client) + "-" + std::to_string(i) + ".heap";
        args.insert(args.end(), {"--out", rec.path});
      }
      CommandResult r = cli_(args);
      rec.elapsed = r.elapsed;
      rec.failure = CheckOutput(kind, r, pid_, rec);
      out.push_back(std::move(rec));
    }
  }

  Cli cli_;
  pid_t pid_;
  std::string out_dir_;
  // The dump clients dump at once, all of them, with nothing in the test
  // spacing them out: the agent streams kAgentDumpSlots at a time and queues
  // the others, so "no failed call" includes no busy answer.
};

milliseconds Percentile(std::vector<milliseconds> v, double p) {
  if (v.empty()) return milliseconds(0);
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

void PrintFigures(const std::vector<CallRecord>& calls, seconds duration) {
  std::cout << "[load] " << kClients << " clients for " << duration.count() << " s: "
            << calls.size() << " calls\n";
  for (CallKind kind : {CallKind::kStatus, CallKind::kStats, CallKind::kDump}) {
    std::vector<milliseconds> lat;
    for (const CallRecord& c : calls) {
      if (c.kind == kind) lat.push_back(c.elapsed);
    }
    std::cout << "[load]   " << KindName(kind) << ": " << lat.size() << " calls, "
              << static_cast<double>(lat.size()) / static_cast<double>(duration.count())
              << "/s, p50 " << Percentile(lat, 0.5).count() << " ms, p99 "
              << Percentile(lat, 0.99).count() << " ms, max " << Percentile(lat, 1.0).count()
              << " ms\n";
  }
}


class LoadTest : public LoadFaultTest {
 protected:
  // Every dump the load reported: its own file, a heap_v2 profile with the
  // size and SHA-256 memprofctl printed; and no other file (no temp file).
  void ExpectDumpsVerified(const std::vector<CallRecord>& calls);
};

void LoadTest::ExpectDumpsVerified(const std::vector<CallRecord>& calls) {
  std::set<std::string> paths, digests;
  int checked = 0;
  for (const CallRecord& c : calls) {
    if (c.kind != CallKind::kDump || !c.failure.empty()) continue;
    std::string data = ReadFile(c.path);
    EXPECT_TRUE(data.starts_with("heap_v2/")) << c.path << ": " << data.substr(0, 80);
    EXPECT_NE(data.find("MAPPED_LIBRARIES:"), std::string::npos) << c.path << " is truncated";
    EXPECT_EQ(data.size(), c.size_bytes) << c.path;
    EXPECT_EQ(Sha256Hex(data), c.sha256) << c.path;
    EXPECT_TRUE(paths.insert(c.path).second) << c.path << " written twice";
    digests.insert(c.sha256);
    ++checked;
  }
  std::vector<std::string> entries = NonSocketEntries();
  EXPECT_EQ(entries.size(), paths.size()) << "files other than the dumps (temp files?) are left";
  for (const std::string& name : entries) {
    EXPECT_TRUE(paths.contains(dir().File(name))) << "unexpected file " << name;
  }
  std::cout << "[load]   dumps verified: " << checked << " files, " << digests.size()
            << " distinct contents\n";
}

TEST_F(LoadTest, ThirtyTwoClientsNoFailedCallAndTheTargetReturnsToRest) {
  TargetProcess* t = StartBusyTarget();
  ASSERT_NE(t, nullptr);
  std::optional<ProcessGauges> before = GaugesAtRest(*t);
  ASSERT_TRUE(before.has_value());
  const auto before_time = std::chrono::steady_clock::now();
  const uint64_t served_before = StatusJson(*t)["dumps_served"].get<uint64_t>();

  LoadRunner runner(
      [this](std::vector<std::string> args) { return Cli(std::move(args), {}, kCallTimeout); },
      t->pid(), SocketDir());
  std::vector<CallRecord> calls = runner.Run(settings().load_duration);

  PrintFigures(calls, settings().load_duration);
  int failures = 0, dumps = 0;
  for (const CallRecord& c : calls) {
    if (!c.failure.empty() && ++failures <= 10) {
      ADD_FAILURE() << KindName(c.kind) << " failed after " << c.elapsed.count() << " ms: " << c.failure;
    }
    if (c.kind == CallKind::kDump && c.failure.empty()) ++dumps;
  }
  EXPECT_EQ(failures, 0) << "failed calls (the first 10 are shown above)";
  EXPECT_GE(dumps, kAgentDumpSlots) << "the load made hardly any dump";
  ExpectDumpsVerified(calls);
  // One profile taken by the agent per dump delivered: none lost, none shared.
  EXPECT_EQ(StatusJson(*t)["dumps_served"].get<uint64_t>() - served_before,
            static_cast<uint64_t>(dumps));

  // RSS bound: what the target itself may have leaked since `before` (it
  // runs on with its own allocations), plus kAgentRssAllowanceKb for the agent.
  auto rss_bound_kb = [&] {
    auto elapsed = std::chrono::steady_clock::now() - before_time;
    return before->rss_kb + kAgentRssAllowanceKb +
           kBusyTargetLeakKbPerSecond *
               static_cast<uint64_t>(std::chrono::duration_cast<seconds>(elapsed).count() + 1);
  };
  ProcessGauges after = ExpectBackToRest(*t, *before, rss_bound_kb);
  std::cout << "[load]   target before: " << *before << "\n[load]   target after:  " << after
            << " (RSS bound " << rss_bound_kb() << " kB)\n";
}

}  // namespace
}  // namespace memprof::integration
