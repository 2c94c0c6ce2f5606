#include "cli/client/grpc_profile_client.h"

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/fd.h"
#include "memprof/v1/memory_profile.grpc.pb.h"
#include "tests/cli/testing/cli_test_util.h"
#include "tests/cli/testing/fake_profile_client.h"
#include "tests/cli/testing/unix_socket_server.h"
#include "tests/support/wait_until.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;

// A scripted MemoryProfile service served in this process, so SO_PEERCRED
// reports our own pid.
class ScriptedService final : public memprof::v1::MemoryProfile::Service {
 public:
  grpc::Status status_reply = grpc::Status::OK;
  // The first this many Status calls are answered CANCELLED, as an agent
  // whose gRPC stops for a fork() answers the calls in flight.
  std::atomic<int> cancel_first_status_calls = 0;
  std::string dump_data = std::string(300000, 'h');
  bool block_dump_after_first_chunk = false;
  bool hang_status = false;
  // Dump: how long before the first chunk (a turn in a busy agent's queue),
  // and between chunks (a slow transfer).
  milliseconds dump_start_delay{0};
  milliseconds dump_chunk_delay{0};
  std::atomic<bool> dump_saw_cancel = false;
  // Dump: ends the stream itself after the first chunk (as the agent does
  // when its stall deadline passes).
  bool agent_cancels_dump = false;

  std::atomic<int> status_calls = 0;
  // Watch: UNIMPLEMENTED (an agent older than it) unless set; then these
  // events, after which the stream stays open until the client cancels.
  std::optional<std::vector<memprof::v1::WatchEvent>> watch_events;
  std::atomic<bool> watch_saw_cancel = false;

  grpc::Status Watch(grpc::ServerContext* ctx, const memprof::v1::WatchRequest*,
                     grpc::ServerWriter<memprof::v1::WatchEvent>* writer) override {
    if (!watch_events) return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "");
    for (const auto& event : *watch_events) {
      if (!writer->Write(event)) return grpc::Status::CANCELLED;
    }
    watch_saw_cancel = WaitForCancel(ctx);
    return grpc::Status::CANCELLED;
  }

  grpc::Status Status(grpc::ServerContext* ctx, const memprof::v1::StatusRequest*,
                      memprof::v1::StatusResponse* response) override {
    ++status_calls;
    if (cancel_first_status_calls.fetch_sub(1) > 0) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "Cancelled");
    }
    if (hang_status) WaitForCancel(ctx);
    response->set_pid(::getpid());
    response->set_agent_version("test");
    return status_reply;
  }

  grpc::Status Dump(grpc::ServerContext* ctx, const memprof::v1::DumpRequest*,
                    grpc::ServerWriter<memprof::v1::DumpChunk>* writer) override {
    const auto chunks = testing::MakeDumpStream(dump_data, 65536);
    if (dump_start_delay.count() > 0 && WaitForCancel(ctx, dump_start_delay)) {
      dump_saw_cancel = true;
      return grpc::Status::CANCELLED;
    }
    for (size_t i = 0; i < chunks.size(); ++i) {
      if (i > 0 && dump_chunk_delay.count() > 0) std::this_thread::sleep_for(dump_chunk_delay);
      if (!writer->Write(chunks[i])) return grpc::Status::CANCELLED;
      if (agent_cancels_dump) {
        ctx->TryCancel();
        return grpc::Status::CANCELLED;
      }
      if (i == 1 && block_dump_after_first_chunk) {
        WaitForCancel(ctx);
        return grpc::Status::CANCELLED;
      }
    }
    return grpc::Status::OK;
  }

 private:
  // Waits until the client cancels or the deadline passes (the server
  // context reports both), bounded so a broken test cannot hang forever.
  // True if it was cancelled (within `limit`).
  static bool WaitForCancel(grpc::ServerContext* ctx,
                            milliseconds limit = std::chrono::seconds(20)) {
    std::mutex mu;
    std::condition_variable cv;
    std::unique_lock lock(mu);
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (!ctx->IsCancelled() && std::chrono::steady_clock::now() < give_up) {
      cv.wait_for(lock, milliseconds(5));
    }
    return ctx->IsCancelled();
  }
};

class GrpcProfileClientTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  std::string socket_ = dir_.File("agent.sock");
  ScriptedService service_;
  std::unique_ptr<grpc::Server> server_;
  Target target_{::getpid(), socket_, "self"};

  void SetUp() override {
    server_ = testing::ServeOnUnixSocket(socket_, service_);
    ASSERT_TRUE(server_);
  }
  void TearDown() override { server_->Shutdown(); }
};

TEST_F(GrpcProfileClientTest, StatusRoundTrip) {
  GrpcProfileClient client(milliseconds(5000), {});
  auto status = client.Status(target_);
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(status->pid(), ::getpid());
  EXPECT_EQ(status->agent_version(), "test");
}

TEST_F(GrpcProfileClientTest, AgentErrorsAreMapped) {
  service_.status_reply = grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "no jemalloc here");
  GrpcProfileClient client(milliseconds(5000), {});
  auto status = client.Status(target_);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(status.error().message, "no jemalloc here");
}

// The scripted service does not implement Purge, like an agent built before
// it: gRPC answers UNIMPLEMENTED, which must say what to do, as exit 5.
TEST_F(GrpcProfileClientTest, PurgeOnAnOlderAgentSaysToRestartIt) {
  GrpcProfileClient client(milliseconds(5000), {});
  auto purge = client.Purge(target_);
  ASSERT_FALSE(purge);
  EXPECT_EQ(purge.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(purge.error().message,
            "the agent in " + DescribeTarget(target_) +
                " is older than this memprofctl and has no purge; restart it with the current "
                "agent");
}

TEST_F(GrpcProfileClientTest, DeadlineBecomesUnavailable) {
  service_.hang_status = true;
  GrpcProfileClient client(milliseconds(200), {});
  auto status = client.Status(target_);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(status.error().message.find("did not answer in time"), std::string::npos);
}

TEST_F(GrpcProfileClientTest, DumpStreamsEveryChunk) {
  GrpcProfileClient client(milliseconds(5000), {});
  std::string received;
  size_t chunks = 0;
  auto result = client.Dump(target_, {}, [&](const memprof::v1::DumpChunk& c) -> Result<void> {
    ++chunks;
    if (c.has_data()) received += c.data();
    return {};
  });
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(received, service_.dump_data);
  EXPECT_EQ(chunks, 2 + (service_.dump_data.size() + 65535) / 65536);
}

Result<void> DumpToString(GrpcProfileClient& client, const Target& target, std::string& out) {
  return client.Dump(target, {}, [&](const memprof::v1::DumpChunk& c) -> Result<void> {
    if (c.has_data()) out += c.data();
    return {};
  });
}

TEST_F(GrpcProfileClientTest, DumpWaitsForTheAgentToStartItWithinTheTimeout) {
  // A busy agent queues the dump: the first chunk comes late, but in time.
  service_.dump_start_delay = milliseconds(300);
  GrpcProfileClient client(milliseconds(5000), {});
  std::string received;
  auto result = DumpToString(client, target_, received);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(received, service_.dump_data);
}

TEST_F(GrpcProfileClientTest, DumpNotStartedWithinTheTimeoutIsCancelledAndExplained) {
  service_.dump_start_delay = std::chrono::seconds(20);
  GrpcProfileClient client(milliseconds(300), {});
  std::string received;
  const auto start = std::chrono::steady_clock::now();
  auto result = DumpToString(client, target_, received);
  ASSERT_FALSE(result);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(result.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(result.error().message.find("did not start sending the heap profile within 300ms"),
            std::string::npos)
      << result.error().message;
  EXPECT_NE(result.error().message.find("--timeout"), std::string::npos);
  // The agent learns at once that its waiter left (it leaves the queue).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!service_.dump_saw_cancel && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(5));  // polling with a deadline
  }
  EXPECT_TRUE(service_.dump_saw_cancel) << "the agent never saw the call cancelled";
}

TEST_F(GrpcProfileClientTest, DumpTransferMayOutlastTheTimeout) {
  // The timeout bounds the start only: a slow transfer of a started dump
  // (6 chunks, 100 ms apart) is not cut off by a 300 ms --timeout.
  service_.dump_chunk_delay = milliseconds(100);
  GrpcProfileClient client(milliseconds(300), {});
  std::string received;
  auto result = DumpToString(client, target_, received);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(received, service_.dump_data);
}

TEST_F(GrpcProfileClientTest, AStreamTheAgentCancelsIsExplained) {
  service_.agent_cancels_dump = true;
  GrpcProfileClient client(milliseconds(5000), {});
  std::string received;
  auto result = DumpToString(client, target_, received);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kCancelled);
  EXPECT_NE(result.error().message.find("ended the dump stream"), std::string::npos)
      << result.error().message;
  EXPECT_NE(result.error().message.find("MEMPROF_DUMP_STALL_TIMEOUT"), std::string::npos);
}

TEST_F(GrpcProfileClientTest, SinkErrorCancelsTheStream) {
  GrpcProfileClient client(milliseconds(5000), {});
  auto result = client.Dump(target_, {}, [](const memprof::v1::DumpChunk& c) -> Result<void> {
    if (c.has_data()) return Fail(ErrorCode::kDataLoss, "bad chunk");
    return {};
  });
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kDataLoss);
}

TEST_F(GrpcProfileClientTest, StopRequestCancelsABlockedDump) {
  service_.block_dump_after_first_chunk = true;
  std::stop_source stop;
  GrpcProfileClient client(milliseconds(5000), stop.get_token());
  std::thread canceller;
  auto result = client.Dump(target_, {}, [&](const memprof::v1::DumpChunk& c) -> Result<void> {
    if (c.has_data() && !canceller.joinable()) {
      canceller = std::thread([&stop] { stop.request_stop(); });
    }
    return {};
  });
  canceller.join();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kCancelled);
}

// An agent older than Watch: false, so the caller asks Status instead.
TEST_F(GrpcProfileClientTest, WatchOnAnAgentOlderThanItSaysItCannotPush) {
  GrpcProfileClient client(milliseconds(5000), {});
  int events = 0;
  auto watched = client.Watch(
      target_, [&](const memprof::v1::WatchEvent&) -> Result<bool> { return ++events, true; }, {});
  ASSERT_TRUE(watched) << watched.error().message;
  EXPECT_FALSE(*watched);
  EXPECT_EQ(events, 0);
}

// Each event reaches the sink as it comes; the sink's false ends the watch
// (true), and the agent sees the cancel.
TEST_F(GrpcProfileClientTest, WatchHandsEachEventToTheSinkUntilItSaysEnough) {
  service_.watch_events.emplace(3);
  for (int i = 0; i < 3; ++i) {
    (*service_.watch_events)[i].mutable_capture()->set_taken_total(static_cast<uint64_t>(i));
  }
  GrpcProfileClient client(milliseconds(5000), {});
  std::vector<uint64_t> seen;
  auto watched = client.Watch(target_,
                              [&](const memprof::v1::WatchEvent& event) -> Result<bool> {
                                seen.push_back(event.capture().taken_total());
                                return seen.size() < 3;
                              },
                              {});
  ASSERT_TRUE(watched) << watched.error().message;
  EXPECT_TRUE(*watched);
  EXPECT_EQ(seen, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_TRUE(test_support::WaitUntil([&] { return service_.watch_saw_cancel.load(); },
                                      std::chrono::seconds(10)));
}

// A watch waiting for the next event ends at a stop request (kCancelled).
TEST_F(GrpcProfileClientTest, StopRequestEndsAWatchThatWaits) {
  service_.watch_events.emplace(1);
  GrpcProfileClient client(milliseconds(5000), {});
  std::stop_source stop;
  std::atomic<int> events = 0;
  std::thread stopper([&] {
    (void)test_support::WaitUntil([&] { return events.load() > 0; }, std::chrono::seconds(10));
    stop.request_stop();
  });
  auto watched = client.Watch(
      target_, [&](const memprof::v1::WatchEvent&) -> Result<bool> { return ++events, true; },
      stop.get_token());
  stopper.join();
  ASSERT_FALSE(watched);
  EXPECT_EQ(watched.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(events.load(), 1);
}

TEST_F(GrpcProfileClientTest, RefusesASocketServedByAnotherPid) {
  const Target wrong{::getppid(), socket_, "parent"};
  GrpcProfileClient client(milliseconds(5000), {});
  auto status = client.Status(wrong);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(status.error().message.find("is not served by pid " + std::to_string(::getppid())),
            std::string::npos)
      << status.error().message;
}

// Stands in for an agent whose host closed its descriptors: listens at
// `path`, accepts `drops` connections and closes each without reading or
// writing a byte. Before closing the last one it renames `then_serve` (a
// real server's socket) over `path`, as the agent re-creates its socket
// there; with an empty `then_serve` the path keeps dropping nobody.
// kCloseListener drops the first connection as the agent does: by closing
// the listening socket it is still queued on, never accepting it.
class DroppingListener {
 public:
  enum class Mode { kAcceptAndClose, kCloseListener };

  DroppingListener(const std::string& path, int drops, std::string then_serve,
                   Mode mode = Mode::kAcceptAndClose)
      : path_(path), listener_(testing::ListenOn(path)), then_serve_(std::move(then_serve)) {
    if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    thread_ = std::thread([this, drops, mode] {
      mode == Mode::kAcceptAndClose ? Run(drops) : CloseOnFirstConnection();
    });
  }
  ~DroppingListener() {
    ::close(stop_pipe_[1]);  // wakes the thread if it still waits
    thread_.join();
    ::close(stop_pipe_[0]);
  }
  int dropped() const { return dropped_; }
  // Whether a connection is waiting to be accepted (a further attempt).
  bool Pending() const {
    pollfd p{listener_.get(), POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
  }

 private:
  void Run(int drops) {
    for (int i = 0; i < drops; ++i) {
      if (!AwaitConnection()) return;
      Fd conn(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (i + 1 == drops && !then_serve_.empty()) {
        ::rename(then_serve_.c_str(), path_.c_str());
      }
      ++dropped_;
    }  // `conn` closes here: the drop
  }

  void CloseOnFirstConnection() {
    if (!AwaitConnection()) return;
    ::rename(then_serve_.c_str(), path_.c_str());
    listener_.Reset();  // the queued connection goes with it
    ++dropped_;
  }

  bool AwaitConnection() {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    return ::poll(fds, 2, 20000) > 0 && fds[1].revents == 0;
  }

  std::string path_;
  Fd listener_;
  std::string then_serve_;
  int stop_pipe_[2] = {-1, -1};
  std::atomic<int> dropped_ = 0;
  std::thread thread_;
};

class GrpcRetryTest : public GrpcProfileClientTest {
 protected:
  std::string front_ = dir_.File("front.sock");
  Target front_target_{::getpid(), front_, "self"};
};

TEST_F(GrpcRetryTest, ADroppedFreshConnectionIsTriedAgain) {
  DroppingListener agent(front_, 1, socket_);
  GrpcProfileClient client(milliseconds(5000), {});
  auto status = client.Status(front_target_);
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(status->agent_version(), "test");
  EXPECT_EQ(agent.dropped(), 1);
  EXPECT_EQ(service_.status_calls, 1);
}

TEST_F(GrpcRetryTest, AConnectionLostWithTheOldListeningSocketIsTriedAgain) {
  DroppingListener agent(front_, 1, socket_, DroppingListener::Mode::kCloseListener);
  GrpcProfileClient client(milliseconds(5000), {});
  auto status = client.Status(front_target_);
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(agent.dropped(), 1);
  EXPECT_EQ(service_.status_calls, 1);
}

TEST_F(GrpcRetryTest, ADumpDroppedBeforeItsFirstChunkIsStreamedOnceInFull) {
  DroppingListener agent(front_, 2, socket_);
  GrpcProfileClient client(milliseconds(5000), {});
  std::string received;
  auto result =
      client.Dump(front_target_, {}, [&](const memprof::v1::DumpChunk& c) -> Result<void> {
        if (c.has_data()) received += c.data();
        return {};
      });
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(received, service_.dump_data);
  EXPECT_EQ(agent.dropped(), 2);
}

TEST_F(GrpcRetryTest, GivesUpAfterThreeDrops) {
  DroppingListener agent(front_, kMaxCallAttempts, "");
  GrpcProfileClient client(milliseconds(5000), {});
  auto status = client.Status(front_target_);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(status.error().message.find("is not answering on " + front_), std::string::npos)
      << status.error().message;
  EXPECT_NE(status.error().message.find("(tried 3 times)"), std::string::npos)
      << status.error().message;
  EXPECT_EQ(agent.dropped(), kMaxCallAttempts);
  EXPECT_FALSE(agent.Pending()) << "a fourth attempt";
}

// Found by the soak: a stats call in flight while the target forked
// (redis BGSAVE) failed with "request ... cancelled" instead of being asked
// again, as the user guide promises.
TEST_F(GrpcRetryTest, ACallTheAgentCancelledIsAskedAgain) {
  service_.cancel_first_status_calls = 1;
  GrpcProfileClient client(milliseconds(5000), {});
  auto status = client.Status(target_);
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(status->agent_version(), "test");
  EXPECT_EQ(service_.status_calls, 2);
}

TEST_F(GrpcRetryTest, AnAgentAnsweringUnavailableIsNotAskedAgain) {
  service_.status_reply =
      grpc::Status(grpc::StatusCode::UNAVAILABLE, "jemalloc is busy (try again)");
  GrpcProfileClient client(milliseconds(5000), {});
  auto status = client.Status(target_);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(status.error().message.find("jemalloc is busy"), std::string::npos)
      << status.error().message;
  EXPECT_EQ(status.error().message.find("tried"), std::string::npos) << status.error().message;
  EXPECT_EQ(service_.status_calls, 1);
}

TEST(RetryDelayTest, ADroppedConnectionIsRetriedWithGrowingWaits) {
  RetryContext c{.failure = AttemptFailure::kDropped, .time_left = milliseconds(5000)};
  c.attempt = 1;
  EXPECT_EQ(RetryDelay(c), milliseconds(50));
  c.attempt = 2;
  EXPECT_EQ(RetryDelay(c), milliseconds(100));
  c.attempt = kMaxCallAttempts;
  EXPECT_EQ(RetryDelay(c), std::nullopt);
}

TEST(RetryDelayTest, AGoneSocketIsRetriedOnlyAfterADrop) {
  RetryContext c{.failure = AttemptFailure::kSocketGone, .time_left = milliseconds(5000)};
  c.attempt = 1;  // a stale socket from the start: say so at once
  EXPECT_EQ(RetryDelay(c), std::nullopt);
  c.attempt = 2;  // the agent dropped us and is re-creating its socket
  EXPECT_EQ(RetryDelay(c), milliseconds(100));
}

TEST(RetryDelayTest, NeverForOtherFailuresRemoteTargetsOrAfterData) {
  RetryContext c{.failure = AttemptFailure::kOther, .time_left = milliseconds(5000)};
  EXPECT_EQ(RetryDelay(c), std::nullopt);
  c.failure = AttemptFailure::kDropped;
  c.unix_target = false;
  EXPECT_EQ(RetryDelay(c), std::nullopt);
  c.unix_target = true;
  c.data_delivered = true;
  EXPECT_EQ(RetryDelay(c), std::nullopt);
}

TEST(RetryDelayTest, TheWaitMustFitBeforeTheDeadline) {
  RetryContext c{.failure = AttemptFailure::kDropped, .time_left = milliseconds(51)};
  EXPECT_EQ(RetryDelay(c), milliseconds(50));
  c.time_left = milliseconds(50);
  EXPECT_EQ(RetryDelay(c), std::nullopt);
  c.time_left = milliseconds(0);
  EXPECT_EQ(RetryDelay(c), std::nullopt);
}

TEST(GrpcProfileClientStaleTest, SocketNobodyListensOnIsStale) {
  testing::TempDir dir;
  const std::string path = dir.File("1.sock");
  testing::MakeSocketFile(path);
  GrpcProfileClient client(milliseconds(1000), {});
  auto status = client.Status(Target{::getpid(), path, "x"});
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(status.error().message.rfind("stale socket " + path, 0), 0u) << status.error().message;
}

TEST(GrpcProfileClientStaleTest, AlreadyStoppedClientDoesNotConnect) {
  std::stop_source stop;
  stop.request_stop();
  GrpcProfileClient client(milliseconds(1000), stop.get_token());
  auto status = client.Status(Target{::getpid(), "/nonexistent.sock", "x"});
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kCancelled);
}

}  // namespace
}  // namespace memprof::cli
