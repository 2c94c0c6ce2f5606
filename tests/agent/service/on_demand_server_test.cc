#include "agent/service/on_demand_server.h"

#include <grpcpp/create_channel_posix.h>
#include <grpcpp/grpcpp.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "memprof/v1/memory_profile.grpc.pb.h"

namespace memprof::agent {
namespace {

using std::chrono::seconds;

// Answers Status with a fixed pid; nothing else is needed to exercise the
// server's transport limits.
class FixedStatusService final : public v1::MemoryProfile::CallbackService {
 public:
  grpc::ServerUnaryReactor* Status(grpc::CallbackServerContext* context, const v1::StatusRequest*,
                                   v1::StatusResponse* response) override {
    response->set_pid(4242);
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

class OnDemandServerTest : public ::testing::Test {
 protected:
  // Hands the server a fresh connection, as the agent's accept thread does
  // (OnDemandServer is not thread-safe: only one thread may call Adopt), and
  // returns the client's end, or -1.
  int Connect() {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0) return -1;
    if (auto r = server_.Adopt(Fd(sv[0])); !r) {
      ::close(sv[1]);
      return -1;
    }
    return sv[1];
  }

  // A Status call on `client_fd` (from Connect(), owned by the channel from
  // here on) whose request carries `padding` bytes of unknown field (a
  // well-formed message of any size; the client itself sends without limit).
  static grpc::Status StatusOn(int client_fd, size_t padding) {
    if (client_fd < 0) return grpc::Status(grpc::StatusCode::INTERNAL, "could not connect");
    grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(-1);
    auto stub = v1::MemoryProfile::NewStub(
        grpc::CreateCustomInsecureChannelFromFd("test", client_fd, args));
    v1::StatusRequest request;
    request.GetReflection()->MutableUnknownFields(&request)->AddLengthDelimited(
        1000, std::string(padding, 'x'));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(20));
    v1::StatusResponse response;
    grpc::Status status = stub->Status(&context, request, &response);
    if (status.ok() && response.pid() != 4242) {
      return grpc::Status(grpc::StatusCode::INTERNAL, "wrong response");
    }
    return status;
  }

  grpc::Status StatusWithPadding(size_t padding) { return StatusOn(Connect(), padding); }

  FixedStatusService service_;
  CallTracker calls_;
  OnDemandServer server_{service_, calls_, seconds(30)};
};

TEST_F(OnDemandServerTest, ServesRequestsUpToTheLimit) {
  EXPECT_TRUE(StatusWithPadding(0).ok());
  grpc::Status st = StatusWithPadding(OnDemandServer::kMaxRequestBytes - 1024);
  EXPECT_TRUE(st.ok()) << st.error_message();
}

// A request over the limit is refused (gRPC drops the connection once the
// length prefix is read, so the client may see UNAVAILABLE or
// RESOURCE_EXHAUSTED); the next client is served as usual.
TEST_F(OnDemandServerTest, RefusesLargerRequestsAndServesOn) {
  EXPECT_FALSE(StatusWithPadding(OnDemandServer::kMaxRequestBytes + 1).ok());
  EXPECT_FALSE(StatusWithPadding(8 * 1024 * 1024).ok());
  EXPECT_TRUE(StatusWithPadding(0).ok());
  EXPECT_TRUE(server_.serving());
}

// Several big requests at once (each over the limit, together over the
// memory quota) are all refused, and the server still serves afterwards.
TEST_F(OnDemandServerTest, ConcurrentBigRequestsAreRefused) {
  std::vector<grpc::Status> results(4);
  std::vector<std::thread> senders;
  // Connections are adopted one by one, as the accept thread does; the
  // requests then arrive at once.
  for (auto& r : results) {
    senders.emplace_back([&r, fd = Connect()] { r = StatusOn(fd, 16u << 20); });
  }
  for (auto& t : senders) t.join();
  for (const auto& r : results) EXPECT_FALSE(r.ok());
  EXPECT_TRUE(StatusWithPadding(0).ok());
}

}  // namespace
}  // namespace memprof::agent
