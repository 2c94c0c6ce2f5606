// RunExporter over a real HTTP server, with fake agents: what the exporter
// command wires together.
#include "cli/commands/exporter_command.h"

#include <future>
#include <mutex>
#include <vector>

#include "tests/cli/testing/command_test_fixture.h"
#include "tests/support/http_client.h"
#include "tests/support/wait_until.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;

class ExporterCommandTest : public testing::CommandTest {
 protected:
  // Every client the exporter makes: its deadline. Each answers Status as a
  // target with profiling active, and fails its dump as an agent that does
  // not start sending in time.
  TimedClientFactory make_client_ = [this](milliseconds timeout) {
    std::lock_guard lock(mu_);
    deadlines_.push_back(timeout);
    auto client = std::make_unique<testing::FakeProfileClient>();
    client->status_result->set_allocator(memprof::v1::ALLOCATOR_KIND_JEMALLOC);
    client->status_result->set_profiling_supported(true);
    client->status_result->set_profiling_enabled(true);
    client->status_result->set_profiling_active(true);
    client->dump_result = Fail(ErrorCode::kUnavailable, "did not start sending in time");
    return std::unique_ptr<ProfileClient>(std::move(client));
  };

  // GET `path` from RunExporter(`options`), once it listens; then stops it.
  test_support::HttpReply Serve(ExporterOptions options, const std::string& path) {
    const std::string address = "127.0.0.1:" + std::to_string(test_support::FreeLoopbackPort());
    options.listen = address;
    std::stop_source stop;
    const Console console{out_, err_};
    auto run = std::async(std::launch::async, [&] {
      return RunExporter(options, discovery_, make_client_, console, stop.get_token());
    });
    test_support::HttpReply reply;
    EXPECT_TRUE(test_support::WaitUntil(
        [&] {
          reply = test_support::HttpGet(address, path);
          return reply.status != 0 || run.wait_for(milliseconds(0)) == std::future_status::ready;
        },
        std::chrono::seconds(30)));
    stop.request_stop();
    auto ran = run.get();
    EXPECT_TRUE(ran) << ran.error().message;
    return reply;
  }

  std::mutex mu_;
  std::vector<milliseconds> deadlines_;
};

// A heap profile's calls to the agent (Status, the dump, putting the state
// back) have the deadline of --target-timeout, as a scrape's do.
TEST_F(ExporterCommandTest, HeapProfilesCallTheAgentWithTheTargetTimeout) {
  ExporterOptions options;
  options.target_timeout = "250ms";
  test_support::HttpReply reply = Serve(options, "/debug/pprof/heap?pid=42");
  EXPECT_EQ(reply.status, 503) << reply.body;
  EXPECT_NE(reply.body.find("did not start sending in time"), std::string::npos) << reply.body;
  std::lock_guard lock(mu_);
  EXPECT_GE(deadlines_.size(), 2u) << "Status, then the dump's client";
  for (const milliseconds deadline : deadlines_) EXPECT_EQ(deadline, milliseconds(250));
}

// /debug/pprof/allocs opens an allocation window through the agent's client
// (collect/allocation_window.h), with the same deadlines; an agent that
// cannot open one is a target that cannot be profiled that way (412).
TEST_F(ExporterCommandTest, AllocsOpensAnAllocationWindowInTheAgent) {
  ExporterOptions options;
  options.target_timeout = "250ms";
  test_support::HttpReply reply = Serve(options, "/debug/pprof/allocs?pid=42&seconds=1");
  EXPECT_EQ(reply.status, 412) << reply.body;
  EXPECT_NE(reply.body.find("cannot open allocation windows (pid 42)"), std::string::npos)
      << reply.body;
  std::lock_guard lock(mu_);
  for (const milliseconds deadline : deadlines_) EXPECT_EQ(deadline, milliseconds(250));
}

}  // namespace
}  // namespace memprof::cli
