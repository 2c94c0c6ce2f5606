#include "cli/grpc_profile_client.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>

#include "cli_test_util.h"
#include "common/fd.h"
#include "fake_profile_client.h"
#include "memprof/v1/memory_profile.grpc.pb.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;

// A scripted MemoryProfile service served in this process, so SO_PEERCRED
// reports our own pid.
class ScriptedService final : public memprof::v1::MemoryProfile::Service {
 public:
  grpc::Status status_reply = grpc::Status::OK;
  std::string dump_data = std::string(300000, 'h');
  bool block_dump_after_first_chunk = false;
  bool hang_status = false;

  grpc::Status Status(grpc::ServerContext* ctx, const memprof::v1::StatusRequest*,
                      memprof::v1::StatusResponse* response) override {
    if (hang_status) WaitForCancel(ctx);
    response->set_pid(::getpid());
    response->set_agent_version("test");
    return status_reply;
  }

  grpc::Status Dump(grpc::ServerContext* ctx, const memprof::v1::DumpRequest*,
                    grpc::ServerWriter<memprof::v1::DumpChunk>* writer) override {
    const auto chunks = testing::MakeDumpStream(dump_data, 65536);
    for (size_t i = 0; i < chunks.size(); ++i) {
      if (!writer->Write(chunks[i])) return grpc::Status::CANCELLED;
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
  static void WaitForCancel(grpc::ServerContext* ctx) {
    std::mutex mu;
    std::condition_variable cv;
    std::unique_lock lock(mu);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!ctx->IsCancelled() && std::chrono::steady_clock::now() < give_up) {
      cv.wait_for(lock, milliseconds(5));
    }
  }
};

class GrpcProfileClientTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  std::string socket_ = dir_.Join("agent.sock");
  ScriptedService service_;
  std::unique_ptr<grpc::Server> server_;
  Target target_{::getpid(), socket_, "self"};

  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
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

TEST(GrpcProfileClientStaleTest, SocketNobodyListensOnIsStale) {
  testing::TempDir dir;
  const std::string path = dir.Join("1.sock");
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
