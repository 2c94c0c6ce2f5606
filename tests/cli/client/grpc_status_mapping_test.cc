#include "cli/client/grpc_status_mapping.h"

#include <gtest/gtest.h>

namespace memprof::cli {
namespace {

const Target kTarget{1234, "/tmp/memprof/1234.sock", "demo"};

Error Map(grpc::StatusCode code, const std::string& message = "agent says so") {
  return ErrorFromGrpcStatus(grpc::Status(code, message), kTarget);
}

TEST(GrpcStatusMappingTest, CodesMapToErrorKinds) {
  EXPECT_EQ(Map(grpc::StatusCode::FAILED_PRECONDITION).code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(Map(grpc::StatusCode::PERMISSION_DENIED).code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(Map(grpc::StatusCode::INVALID_ARGUMENT).code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(Map(grpc::StatusCode::UNAVAILABLE).code, ErrorCode::kUnavailable);
  EXPECT_EQ(Map(grpc::StatusCode::NOT_FOUND).code, ErrorCode::kNotFound);
  EXPECT_EQ(Map(grpc::StatusCode::DEADLINE_EXCEEDED).code, ErrorCode::kUnavailable);
  EXPECT_EQ(Map(grpc::StatusCode::CANCELLED).code, ErrorCode::kCancelled);
  EXPECT_EQ(Map(grpc::StatusCode::RESOURCE_EXHAUSTED).code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(Map(grpc::StatusCode::INTERNAL).code, ErrorCode::kInternal);
  EXPECT_EQ(Map(grpc::StatusCode::UNKNOWN).code, ErrorCode::kInternal);
  EXPECT_EQ(Map(grpc::StatusCode::UNIMPLEMENTED).code, ErrorCode::kFailedPrecondition);
}

// An agent older than the request: the user restarts it (exit 5).
TEST(GrpcStatusMappingTest, UnimplementedMeansAnOlderAgent) {
  EXPECT_EQ(Map(grpc::StatusCode::UNIMPLEMENTED).message,
            "the agent in pid 1234 (demo) is older than this memprofctl and does not serve this "
            "request; restart it with the current agent");
}

TEST(GrpcStatusMappingTest, AgentMessagesAreKeptAsTheyAre) {
  EXPECT_EQ(Map(grpc::StatusCode::FAILED_PRECONDITION, "restart it with MALLOC_CONF=...").message,
            "restart it with MALLOC_CONF=...");
}

TEST(GrpcStatusMappingTest, TransportFailuresNameTheTarget) {
  const Error unavailable = Map(grpc::StatusCode::UNAVAILABLE, "Socket closed");
  EXPECT_EQ(unavailable.message,
            "the memprof agent of pid 1234 (demo) is not answering on /tmp/memprof/1234.sock "
            "(Socket closed)");
  EXPECT_NE(Map(grpc::StatusCode::DEADLINE_EXCEEDED).message.find("--timeout"), std::string::npos);
}

TEST(GrpcStatusMappingTest, EmptyMessageStillSaysSomething) {
  EXPECT_NE(Map(grpc::StatusCode::INTERNAL, "").message.find("pid 1234"), std::string::npos);
}

}  // namespace
}  // namespace memprof::cli
