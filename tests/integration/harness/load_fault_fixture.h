#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_LOAD_FAULT_FIXTURE_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_LOAD_FAULT_FIXTURE_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/load_settings.h"
#include "tests/integration/harness/process_gauges.h"

namespace memprof::integration {

// The agent's limit on dumps streaming at once (agent/module/agent_server.cc
// kMaxConcurrentDumps); further Dump calls wait for a slot in its queue.
inline constexpr int kAgentDumpSlots = 2;
// Short enough that a test can watch the agent's gRPC server (and its
// threads and descriptors) go away after a burst of calls.
inline constexpr char kShortIdleTimeout[] = "2s";

// What the agent may still hold once it is idle again: jemalloc keeps the
// arenas and thread caches the gRPC threads used and returns freed pages to
// the kernel lazily. Measured on 2 cores: the target ended 12 MiB under the
// resulting bound after both 8 s (174 calls) and 60 s (1056 calls) of load;
// a per-call leak of ~10 kB, or one retained big dump, would exceed it.
inline constexpr uint64_t kAgentRssAllowanceKb = 16 * 1024;

// Base of the load and fault tests: targets whose agent stops its idle gRPC
// server after kShortIdleTimeout and logs that it did (MEMPROF_LOG_LEVEL=
// debug), so a test can take the target's threads, descriptors and RSS at
// rest, before and after, and compare.
class LoadFaultTest : public IntegrationTest {
 protected:
  void SetUp() override;

  const LoadSettings& settings() const { return settings_; }

  // plain_target with the agent preloaded and profiling active: it allocates
  // and frees steadily and leaks at most kBusyTargetLeakKbPerSecond.
  TargetProcess* StartBusyTarget();
  // many_stacks_target with every allocation sampled, so that a dump is
  // large (about `stacks` x 0.6 kB) and takes a noticeable time to stream.
  // `extra_env` is added to the target's environment (e.g. a short
  // MEMPROF_DUMP_STALL_TIMEOUT).
  TargetProcess* StartBigProfileTarget(int stacks,
                                       const std::map<std::string, std::string>& extra_env = {});

  // memprofctl status --pid <target> must succeed (within `timeout`).
  void ExpectStatusServed(const TargetProcess& target,
                          std::chrono::milliseconds timeout = std::chrono::seconds(15));

  // Makes one call (status), then waits until the agent's gRPC server has
  // stopped for idleness and the thread count has settled, and returns the
  // target's gauges then: what "at rest" looks like. nullopt (with a test
  // failure) if the server never stops.
  std::optional<ProcessGauges> GaugesAtRest(TargetProcess& target);

  // After a scenario: waits for the server's idle stop, then until threads
  // and descriptors are back to `baseline` and RSS at most `max_rss_kb()`,
  // and records a failure naming both gauges if they are not. Returns the
  // gauges then.
  ProcessGauges ExpectBackToRest(TargetProcess& target, const ProcessGauges& baseline,
                                 const RssBound& max_rss_kb);

 private:
  bool AwaitServerStop(TargetProcess& target, int stops_before);

  LoadSettings settings_;
};

// plain_target leaks 4 KiB per 10 ms tick (tests/testprogs/plain_target.c):
// its RSS may grow by this much per second of the test on its own.
inline constexpr uint64_t kBusyTargetLeakKbPerSecond = 400;

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_LOAD_FAULT_FIXTURE_H_
