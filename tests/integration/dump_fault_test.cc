// Issue 3, faults during a dump: memprofctl SIGKILLed mid-dump over and over,
// and clients that start a dump and never read it. The agent must release
// every dump (its memfd and its slot), keep serving, and leave nothing behind
// on either side; a SIGKILLed memprofctl must leave no file either.
#include <signal.h>

#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/load_fault_fixture.h"
#include "tests/integration/raw_http2.h"
#include "tests/integration/subprocess.h"
#include "tests/integration/test_binaries.h"
#include "tests/integration/wait_until.h"

namespace memprof::integration {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// About 15 MB of heap_v2 (see many_stacks_target.cc): long enough to stream
// that a kill lands mid-dump, far more than HTTP/2's 64 KiB initial window.
constexpr int kBigProfileStacks = 20000;
// The dump slot and memfd of a dump whose client died are released once the
// agent notices; that must not take long.
constexpr auto kReleaseTimeout = seconds(30);
// A dump costs a many_stacks target ~20 MiB while it is taken (every
// allocation of the agent is sampled under lg_prof_sample:0); at rest again,
// the agent may keep some of that in jemalloc's caches.
constexpr uint64_t kDumpRssAllowanceKb = 32 * 1024;
constexpr char kDumpMethod[] = "/memprof.v1.MemoryProfile/Dump";

// A Dump call made by hand on a raw socket and then never read: it never
// sends WINDOW_UPDATE either, so the agent can send at most HTTP/2's initial
// 64 KiB window before its stream stalls. Closing the socket is the client
// going away.
Fd StartUnreadDump(const std::string& socket) {
  Fd fd = ConnectRaw(socket);
  if (!fd) return fd;
  std::string call = Http2ClientStart() + GrpcCallHeaders(1, kDumpMethod) +
                     Http2Frame(kFrameData, kFlagEndStream, 1, GrpcMessagePrefix(0));
  if (!SendAll(fd.get(), call)) return Fd();
  return fd;
}

bool IsTempOf(const std::string& entry, const std::string& base) {
  return entry.starts_with("." + base + ".");
}

struct KillTally {
  int killed = 0;            // died of the SIGKILL
  int finished_first = 0;    // completed before the kill landed
  int refused = 0;           // exited with an error before the kill (e.g. busy)
  std::set<std::string> temp_files;  // left in the output directory
};


class DumpFaultTest : public LoadFaultTest {
 protected:
  // The big-profile target, warmed up (one full dump, timed) and at rest.
  void StartAndMeasure() {
    target_ = StartBigProfileTarget(kBigProfileStacks);
    ASSERT_NE(target_, nullptr);
    std::string path = dir().File("warmup.heap");
    CommandResult r = CliFor(*target_, "dump", {"--out", path, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r;
    dump_time_ = r.elapsed;
    std::cout << "[dump-fault] a full dump of " << ReadFile(path).size() << " bytes takes "
              << r.elapsed.count() << " ms\n";
    ::unlink(path.c_str());
    std::optional<ProcessGauges> rest = GaugesAtRest(*target_);
    ASSERT_TRUE(rest.has_value());
    rest_ = *rest;
    std::cout << "[dump-fault] at rest: " << rest_ << "\n";
  }

  bool AwaitNoDumpInAgent() {
    return WaitUntil(
        [&] {
          std::optional<ProcessGauges> g = ReadGauges(target_->pid());
          return g && g->dump_memfds == 0;
        },
        kReleaseTimeout, milliseconds(20));
  }

  // One memprofctl dump, SIGKILLed after `delay` unless it ended first.
  void KillOneDump(milliseconds delay, KillTally& tally);

  void ExpectBackToRest() {
    LoadFaultTest::ExpectBackToRest(*target_, rest_,
                                    [this] { return rest_.rss_kb + kDumpRssAllowanceKb; });
  }

  TargetProcess* target_ = nullptr;
  ProcessGauges rest_;
  milliseconds dump_time_{0};  // of one whole `memprofctl dump`
};

void DumpFaultTest::KillOneDump(milliseconds delay, KillTally& tally) {
  const std::string out = dir().File("killed.heap");
  auto proc = Subprocess::Spawn(SpawnOptions{
      {kMemprofctl, "dump", "--pid", std::to_string(target_->pid()), "--out", out},
      {{"MEMPROF_SOCKET_DIR", SocketDir()}},
      -1});
  ASSERT_TRUE(proc.has_value()) << proc.error().message;
  std::this_thread::sleep_for(delay);  // lets the dump get somewhere; not a synchronisation
  ExitStatus st = (*proc)->KillAndReap();
  if (st.term_signal == SIGKILL) {
    ++tally.killed;
  } else if (st.exit_code == 0) {
    ++tally.finished_first;
  } else {
    ++tally.refused;
  }
  // A file under the final name was renamed into place after verification:
  // it must be complete even if the kill came right after.
  if (FileExists(out)) {
    std::string data = ReadFile(out);
    EXPECT_TRUE(data.starts_with("heap_v2/") && data.find("MAPPED_LIBRARIES:") != std::string::npos)
        << "a partial " << out << " after a kill at " << delay.count() << " ms";
    ::unlink(out.c_str());
  }
  for (const std::string& name : NonSocketEntries()) {
    if (IsTempOf(name, "killed.heap")) tally.temp_files.insert(name);
  }
}

TEST_F(DumpFaultTest, KilledMemprofctlLeavesNothingAndTheAgentServesOn) {
  ASSERT_NO_FATAL_FAILURE(StartAndMeasure());
  const int iterations = settings().kill_iterations;
  KillTally tally;
  for (int i = 0; i < iterations; ++i) {
    // Start each dump with the agent's slots free, so every kill hits a
    // dump being taken or streamed (not a refusal); a dump the agent never
    // releases fails here.
    ASSERT_TRUE(AwaitNoDumpInAgent()) << "iteration " << i << ": the agent still holds a dump "
                                      << kReleaseTimeout.count() << " s after its client died";
    // From 0 to 100% of a whole dump's time, in 1% steps spread over the
    // iterations (a stride coprime to 101 visits them all): before the
    // connection, while the agent writes the profile, while it streams.
    const int64_t percent = (i * 37) % 101;
    ASSERT_NO_FATAL_FAILURE(KillOneDump(dump_time_ * percent / 100, tally));
  }
  std::cout << "[dump-fault] " << iterations << " kills: " << tally.killed << " mid-dump, "
            << tally.finished_first << " finished first, " << tally.refused << " refused\n";
  EXPECT_GT(tally.killed, iterations / 2) << "most kills should land mid-dump";
  EXPECT_TRUE(tally.temp_files.empty())
      << tally.temp_files.size() << " temp files left by a SIGKILLed memprofctl, e.g. "
      << *tally.temp_files.begin();
  ASSERT_TRUE(AwaitNoDumpInAgent());
  ExpectStatusServed(*target_);
  CommandResult final_dump = CliFor(*target_, "dump", {"--out", dir().File("final.heap")});
  EXPECT_EQ(final_dump.exit_code, 0) << final_dump;
  ::unlink(dir().File("final.heap").c_str());
  ExpectBackToRest();
}

TEST_F(DumpFaultTest, ClientsThatNeverReadHoldOnlyTheirOwnSlots) {
  ASSERT_NO_FATAL_FAILURE(StartAndMeasure());
  const uint64_t served = StatusJson(*target_)["dumps_served"].get<uint64_t>();
  std::vector<Fd> stalled;
  for (int i = 0; i < kAgentDumpSlots; ++i) {
    stalled.push_back(StartUnreadDump(target_->socket_path()));
    ASSERT_TRUE(stalled.back().valid());
  }
  ASSERT_TRUE(WaitUntil(
      [&] { return StatusJson(*target_)["dumps_served"].get<uint64_t>() == served + kAgentDumpSlots; },
      seconds(60), milliseconds(100)))
      << "the agent never took the stalled clients' dumps";
  ASSERT_TRUE(ResetPeakRss(target_->pid()));
  const uint64_t rss_stalled_kb = target_->ProcStatusKb("VmRSS");

  // Both slots are held: one more dump is refused, everything else served.
  ExpectCliError(CliFor(*target_, "dump", {"--out", dir().File("third.heap")}), 1,
                 "already streaming");
  const auto until = std::chrono::steady_clock::now() + seconds(3);
  while (std::chrono::steady_clock::now() < until) {
    ExpectStatusServed(*target_);
    CommandResult stats = CliFor(*target_, "stats", {"--json"});
    EXPECT_EQ(stats.exit_code, 0) << stats;
  }
  // A stalled stream costs one chunk, not the dump: the target must not grow
  // while its clients do not read.
  const uint64_t hwm_kb = target_->ProcStatusKb("VmHWM");
  std::cout << "[dump-fault] 2 stalled dumps: target RSS " << rss_stalled_kb << " kB, peak "
            << hwm_kb << " kB while others were served\n";
  EXPECT_LT(hwm_kb, rss_stalled_kb + 8 * 1024);

  stalled.clear();  // the clients go away
  EXPECT_TRUE(AwaitNoDumpInAgent()) << "closing a stalled client did not release its dump";
  // Both slots are free again: two dumps at once succeed.
  std::vector<std::unique_ptr<Subprocess>> dumps;
  for (int i = 0; i < kAgentDumpSlots; ++i) {
    auto p = Subprocess::Spawn(SpawnOptions{
        {kMemprofctl, "dump", "--pid", std::to_string(target_->pid()), "--out",
         dir().File("after" + std::to_string(i) + ".heap")},
        {{"MEMPROF_SOCKET_DIR", SocketDir()}},
        -1});
    ASSERT_TRUE(p.has_value()) << p.error().message;
    dumps.push_back(std::move(*p));
  }
  for (auto& p : dumps) {
    std::optional<ExitStatus> st = p->Wait(seconds(120));
    ASSERT_TRUE(st.has_value()) << "dump hung";
    EXPECT_EQ(st->exit_code, 0) << p->StderrText();
  }
  ExpectBackToRest();
}

}  // namespace
}  // namespace memprof::integration
