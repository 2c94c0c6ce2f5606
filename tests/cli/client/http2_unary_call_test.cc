#include "cli/client/http2_unary_call.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <thread>

#include "common/fd.h"
#include "common/unix_socket.h"
#include "memprof/v1/memory_profile.grpc.pb.h"
#include "tests/cli/testing/cli_test_util.h"
#include "tests/cli/testing/unix_socket_server.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr char kStatsPath[] = "/memprof.v1.MemoryProfile/Stats";

// A real gRPC server's Stats, scripted.
class StatsService final : public memprof::v1::MemoryProfile::Service {
 public:
  grpc::Status reply = grpc::Status::OK;
  std::string raw;  // the reply's raw text
  bool hang = false;
  std::atomic<int64_t> deadline_ms_seen = -1;  // as the server context had it

  grpc::Status Stats(grpc::ServerContext* ctx, const memprof::v1::StatsRequest* request,
                     memprof::v1::StatsResponse* response) override {
    deadline_ms_seen =
        std::chrono::duration_cast<milliseconds>(ctx->deadline() - std::chrono::system_clock::now())
            .count();
    while (hang && !ctx->IsCancelled()) std::this_thread::sleep_for(milliseconds(5));
    response->set_raw(raw);
    response->set_raw_format(request->raw_format());
    return reply;
  }
};

// Accepts one connection on `path` and hands it to `serve` on a thread of its
// own; joins it when destroyed.
class OnePeer {
 public:
  OnePeer(const std::string& path, std::function<void(int)> serve)
      : listener_(testing::ListenOn(path)), thread_([this, serve = std::move(serve)] {
          pollfd p{listener_.get(), POLLIN, 0};
          if (::poll(&p, 1, 20000) != 1) return;
          Fd connection(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
          if (connection) serve(connection.get());
        }) {}
  ~OnePeer() { thread_.join(); }

 private:
  Fd listener_;
  std::thread thread_;
};

class Http2UnaryCallTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  std::string socket_ = dir_.File("agent.sock");
  StatsService service_;
  std::unique_ptr<grpc::Server> server_;

  void StartServer() {
    server_ = testing::ServeOnUnixSocket(socket_, service_);
    ASSERT_TRUE(server_);
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  UnaryCallOutcome Call(std::string_view path, const std::string& request,
                        milliseconds timeout = milliseconds(5000),
                        const std::stop_token& stop = {}) {
    auto fd = ConnectUnixSocket(socket_, milliseconds(5000));
    EXPECT_TRUE(fd) << fd.error().message;
    if (!fd) return {};
    return CallUnaryOverHttp2(fd->get(), path, request, Clock::now() + timeout, stop);
  }
  UnaryCallOutcome CallStats(milliseconds timeout = milliseconds(5000),
                             const std::stop_token& stop = {}) {
    memprof::v1::StatsRequest request;
    request.set_raw_format(memprof::v1::RAW_STATS_FORMAT_TEXT);
    return Call(kStatsPath, request.SerializeAsString(), timeout, stop);
  }
};

// 5 MiB: hundreds of DATA frames, past HTTP/2's default 64 KiB window.
TEST_F(Http2UnaryCallTest, AReplyOfManyFramesArrivesWhole) {
  service_.raw = std::string(5 << 20, 'j');
  service_.raw.back() = '!';
  StartServer();
  const UnaryCallOutcome call = CallStats();
  ASSERT_TRUE(call.status.ok()) << call.status.error_message();
  memprof::v1::StatsResponse response;
  ASSERT_TRUE(response.ParseFromString(call.response));
  EXPECT_EQ(response.raw(), service_.raw);
  EXPECT_EQ(response.raw_format(), memprof::v1::RAW_STATS_FORMAT_TEXT);
}

TEST_F(Http2UnaryCallTest, TheAgentsStatusAndMessageComeBackAsItSentThem) {
  const std::string message = "jemalloc is busy: 50% done,\n\"naïve\" retry";
  service_.reply = grpc::Status(grpc::StatusCode::UNAVAILABLE, message);
  StartServer();
  const UnaryCallOutcome call = CallStats();
  EXPECT_EQ(call.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(call.status.error_message(), message);
  EXPECT_FALSE(call.unanswered) << "the agent answered";
}

TEST_F(Http2UnaryCallTest, TheAgentLearnsTheDeadline) {
  StartServer();
  ASSERT_TRUE(CallStats(milliseconds(3000)).status.ok());
  EXPECT_GT(service_.deadline_ms_seen, 0);
  EXPECT_LE(service_.deadline_ms_seen, 3000);
}

TEST_F(Http2UnaryCallTest, AMethodTheAgentLacksIsUnimplemented) {
  StartServer();
  const UnaryCallOutcome call = Call("/memprof.v1.MemoryProfile/NoSuchMethod", "");
  EXPECT_EQ(call.status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_FALSE(call.unanswered);
}

TEST_F(Http2UnaryCallTest, AnAgentThatNeverAnswersMeetsTheDeadline) {
  service_.hang = true;
  StartServer();
  const UnaryCallOutcome call = CallStats(milliseconds(200));
  EXPECT_EQ(call.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
}

TEST_F(Http2UnaryCallTest, AStopRequestEndsTheWait) {
  service_.hang = true;
  StartServer();
  std::stop_source stop;
  std::jthread stopper([&stop] {
    std::this_thread::sleep_for(milliseconds(100));
    stop.request_stop();
  });
  const UnaryCallOutcome call = CallStats(milliseconds(20000), stop.get_token());
  EXPECT_EQ(call.status.error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(Http2UnaryCallTest, AConnectionClosedBeforeAnyAnswerIsUnanswered) {
  OnePeer peer(socket_, [](int) {});  // accepts, then closes
  const UnaryCallOutcome call = CallStats();
  EXPECT_EQ(call.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(call.status.error_message(), "Socket closed");
  EXPECT_TRUE(call.unanswered);
}

TEST_F(Http2UnaryCallTest, APeerThatIsNotHttp2IsAnErrorNotADrop) {
  OnePeer peer(socket_, [](int fd) {
    const std::string reply = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n";
    [[maybe_unused]] ssize_t n = ::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
    char sink[4096];
    while (::recv(fd, sink, sizeof(sink), 0) > 0) {
    }
  });
  const UnaryCallOutcome call = CallStats();
  EXPECT_FALSE(call.status.ok());
  EXPECT_NE(call.status.error_message().find("HTTP/2"), std::string::npos)
      << call.status.error_message();
  EXPECT_FALSE(call.unanswered);
}

TEST(GrpcTimeoutHeaderTest, MillisecondsUpToEightDigitsThenSeconds) {
  EXPECT_EQ(GrpcTimeoutHeader(milliseconds(0)), "0m");
  EXPECT_EQ(GrpcTimeoutHeader(milliseconds(1500)), "1500m");
  EXPECT_EQ(GrpcTimeoutHeader(milliseconds(99'999'999)), "99999999m");
  EXPECT_EQ(GrpcTimeoutHeader(milliseconds(100'000'000)), "100000S");
  EXPECT_EQ(GrpcTimeoutHeader(milliseconds(-5)), "0m");
}

TEST(PercentDecodedTest, DecodesEscapesAndKeepsWhatIsNotOne) {
  EXPECT_EQ(PercentDecoded("a%20b%25c"), "a b%c");
  EXPECT_EQ(PercentDecoded("na%C3%AFve%0A"), "na\xC3\xAFve\n");
  EXPECT_EQ(PercentDecoded("100%"), "100%");
  EXPECT_EQ(PercentDecoded("%zz%4"), "%zz%4");
}

TEST(StatusCodeOfHttpStatusTest, AsGrpcMapsThem) {
  EXPECT_EQ(StatusCodeOfHttpStatus(400), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(StatusCodeOfHttpStatus(401), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(StatusCodeOfHttpStatus(403), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(StatusCodeOfHttpStatus(404), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(StatusCodeOfHttpStatus(503), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(StatusCodeOfHttpStatus(500), grpc::StatusCode::UNKNOWN);
}

}  // namespace
}  // namespace memprof::cli
