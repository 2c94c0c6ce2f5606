// Issue 3, faults on the wire: garbage bytes, a half-open connection, an
// oversized message, a flood of connections. Each is made on a plain Unix
// socket (or a hand-driven gRPC channel) so that the test controls exactly
// what is sent; after each the agent must still serve memprofctl, and once
// idle the target must be back to its resting threads, descriptors and RSS.
#include <grpcpp/create_channel_posix.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/unix_socket.h"
#include "memprof/v1/memory_profile.grpc.pb.h"
#include "tests/integration/harness/load_fault_fixture.h"
#include "tests/integration/harness/raw_http2.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kStatusMethod[] = "/memprof.v1.MemoryProfile/Status";
// Over any limit the agent ever had on a received message
// (agent/service/on_demand_server.h).
constexpr uint32_t kOverAnyRequestLimit = 64u * 1024 * 1024 + 1024;
// How long a test holds a bad connection open while others are served.
constexpr auto kHold = seconds(3);

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng() & 0xff);
  return out;
}

// Byte strings a confused or hostile peer might send first.
std::vector<std::string> GarbagePayloads() {
  return {
      RandomBytes(4096, 1),
      "GET / HTTP/1.1\r\nHost: memprof\r\n\r\n",
      std::string("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n") + RandomBytes(512, 2),  // bad preface
      // A valid preface, then a frame header announcing 16 MiB (over the
      // 16 KiB SETTINGS_MAX_FRAME_SIZE) followed by junk.
      Http2ClientStart() + std::string("\xff\xff\xff\x00\x00\x00\x00\x00\x01", 9) +
          RandomBytes(1024, 3),
      // A valid preface, then HEADERS whose HPACK block is junk.
      Http2ClientStart() + Http2Frame(kFrameHeaders, kFlagEndHeaders, 1, RandomBytes(64, 4)),
  };
}

// A Status call through a gRPC channel of our own whose request carries
// `padding` bytes of unknown field: a well-formed message of any size.
grpc::Status StatusWithPadding(const std::string& socket, size_t padding) {
  auto fd = ConnectUnixSocket(socket, seconds(5));
  if (!fd) return grpc::Status(grpc::StatusCode::UNAVAILABLE, fd.error().message);
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(-1);
  auto channel = grpc::CreateCustomInsecureChannelFromFd("memprof-agent", fd->Release(), args);
  auto stub = v1::MemoryProfile::NewStub(channel);
  v1::StatusRequest request;
  request.GetReflection()->MutableUnknownFields(&request)->AddLengthDelimited(
      1000, std::string(padding, 'x'));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(60));
  v1::StatusResponse response;
  return stub->Status(&context, request, &response);
}


class FaultTest : public LoadFaultTest {
 protected:
  void SetUp() override {
    LoadFaultTest::SetUp();
    ASSERT_FALSE(HasFatalFailure());
    target_ = StartBusyTarget();
    ASSERT_NE(target_, nullptr);
    std::optional<ProcessGauges> rest = GaugesAtRest(*target_);
    ASSERT_TRUE(rest.has_value());
    rest_ = *rest;
    rest_time_ = std::chrono::steady_clock::now();
  }

  TargetProcess& target() { return *target_; }

  // The resting gauges again: nothing the fault did is still held.
  void ExpectBackToRest() {
    LoadFaultTest::ExpectBackToRest(*target_, rest_, [this] {
      auto elapsed = std::chrono::duration_cast<seconds>(std::chrono::steady_clock::now() - rest_time_);
      return rest_.rss_kb + kAgentRssAllowanceKb +
             kBusyTargetLeakKbPerSecond * static_cast<uint64_t>(elapsed.count() + 1);
    });
  }

  Fd Connect() {
    Fd fd = ConnectRaw(target_->socket_path());
    EXPECT_TRUE(fd.valid()) << "cannot connect to " << target_->socket_path();
    return fd;
  }

 private:
  TargetProcess* target_ = nullptr;
  ProcessGauges rest_;
  std::chrono::steady_clock::time_point rest_time_;
};

TEST_F(FaultTest, GarbageThenCloseIsShruggedOff) {
  for (const std::string& garbage : GarbagePayloads()) {
    Fd fd = Connect();
    ASSERT_TRUE(fd.valid());
    EXPECT_TRUE(SendAll(fd.get(), garbage));
  }
  ExpectStatusServed(target());
  ExpectBackToRest();
}

TEST_F(FaultTest, GarbageHeldOpenIsDisconnectedAndOthersAreServed) {
  std::vector<Fd> held;
  for (const std::string& garbage : GarbagePayloads()) {
    held.push_back(Connect());
    ASSERT_TRUE(held.back().valid());
    // The agent may hang up before everything is sent: that is fine.
    (void)SendAll(held.back().get(), garbage);
  }
  ExpectStatusServed(target());
  for (size_t i = 0; i < held.size(); ++i) {
    EXPECT_TRUE(WaitForPeerClose(held[i].get(), seconds(10)))
        << "the agent kept garbage connection " << i << " open";
  }
  held.clear();
  ExpectBackToRest();
}

TEST_F(FaultTest, HalfOpenConnectionDoesNotBlockOthers) {
  Fd silent = Connect();
  ASSERT_TRUE(silent.valid());
  const auto until = std::chrono::steady_clock::now() + kHold;
  while (std::chrono::steady_clock::now() < until) ExpectStatusServed(target(), seconds(5));
  // With no call in flight the idle server stops and hangs up on it too:
  // a silent client cannot pin a descriptor in the target for ever.
  EXPECT_TRUE(WaitForPeerClose(silent.get(), seconds(30)))
      << "the agent kept a silent connection open past its idle stop";
  silent.Reset();
  ExpectBackToRest();
}

// A request whose gRPC prefix announces 1 GiB: the agent must refuse it from
// the prefix, not wait for (or make room for) the body.
TEST_F(FaultTest, OversizedAnnouncedMessageIsRefused) {
  Fd fd = Connect();
  ASSERT_TRUE(fd.valid());
  ASSERT_TRUE(ResetPeakRss(target().pid()));
  const uint64_t rss_before_kb = target().ProcStatusKb("VmRSS");
  std::string request = Http2ClientStart() + GrpcCallHeaders(1, kStatusMethod) +
                        Http2Frame(kFrameData, 0, 1, GrpcMessagePrefix(1u << 30) + RandomBytes(8192, 5));
  ASSERT_TRUE(SendAll(fd.get(), request));
  StreamEnd end = WaitForStreamEnd(fd.get(), 1, seconds(10));
  EXPECT_NE(end, StreamEnd::kTimeout) << "the agent is still waiting for a 1 GiB request";
  ExpectStatusServed(target());
  const uint64_t hwm_kb = target().ProcStatusKb("VmHWM");
  std::cout << "[fault] 1 GiB announced: stream ended by " << StreamEndName(end) << "; target RSS "
            << rss_before_kb << " kB before, peak " << hwm_kb << " kB\n";
  EXPECT_LT(hwm_kb, rss_before_kb + kAgentRssAllowanceKb);
  fd.Reset();
  ExpectBackToRest();
}

// Sends `senders` Status requests padded to `padding` bytes at once; returns
// their statuses and prints the target's peak RSS meanwhile.
std::vector<grpc::Status> ConcurrentPaddedStatus(TargetProcess& target, int senders,
                                                 size_t padding, uint64_t& rss_before_kb,
                                                 uint64_t& hwm_kb) {
  EXPECT_TRUE(ResetPeakRss(target.pid()));
  rss_before_kb = target.ProcStatusKb("VmRSS");
  std::vector<grpc::Status> results(static_cast<size_t>(senders));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = StatusWithPadding(target.socket_path(), padding); });
  }
  for (std::thread& t : threads) t.join();
  hwm_kb = target.ProcStatusKb("VmHWM");
  std::cout << "[fault] " << senders << " x " << padding << "-byte requests: target RSS "
            << rss_before_kb << " kB before, peak " << hwm_kb << " kB\n";
  return results;
}

// Well-formed requests just over the limit, several at once: each is
// refused (gRPC drops the connection as soon as the length prefix is over the
// limit, so the client sees UNAVAILABLE rather than RESOURCE_EXHAUSTED), and
// the target's memory does not grow by the requests' size.
TEST_F(FaultTest, OversizedMessagesAreRefusedWithoutBufferingThem) {
  uint64_t before_kb = 0, peak_kb = 0;
  for (const grpc::Status& st :
       ConcurrentPaddedStatus(target(), 4, kOverAnyRequestLimit, before_kb, peak_kb)) {
    EXPECT_FALSE(st.ok()) << "an oversized request was accepted";
  }
  // Half a request: holding any one of them would cross it. gRPC's own start
  // (the first connection starts it) and its read buffers come to 5 to 13
  // MiB here, and to 21 MiB once on a loaded CI run, past the usual
  // allowance for the agent.
  constexpr uint64_t kHalfARequestKb = kOverAnyRequestLimit / 1024 / 2;
  EXPECT_LT(peak_kb, before_kb + kHalfARequestKb)
      << "the agent buffered an oversized request before refusing it";
  ExpectStatusServed(target());
  ExpectBackToRest();
}

// Every request of the protocol is a few bytes, so the agent has no reason
// to take in large ones: a handful of connections sending 8 MiB requests
// (under the agent's former 64 MiB limit) must not cost the host their size
// (docs/contract.md rule 2). gRPC buffers a message whole before it checks the
// size limit, so this holds only through the agent's memory quota
// (agent/service/on_demand_server.h).
TEST_F(FaultTest, LargeRequestsDoNotInflateTheTarget) {
  constexpr int kSenders = 6;
  constexpr size_t kPadding = 8u << 20;
  uint64_t before_kb = 0, peak_kb = 0;
  for (const grpc::Status& st :
       ConcurrentPaddedStatus(target(), kSenders, kPadding, before_kb, peak_kb)) {
    EXPECT_FALSE(st.ok()) << "an 8 MiB request was accepted";
  }
  // gRPC reads part of each request before the quota pushes back, and the
  // host's jemalloc keeps freed pages resident for its decay time: on a busy
  // machine that has reached 30 MB at the peak. Taking the six requests in
  // whole would cost their 48 MiB.
  constexpr uint64_t kWholeRequestsKb = kSenders * kPadding / 1024;
  EXPECT_LT(peak_kb, before_kb + kWholeRequestsKb * 3 / 4)
      << "the agent took in large requests whole";
  ExpectStatusServed(target());
  ExpectBackToRest();
}

TEST_F(FaultTest, ConnectionFloodLeavesNoDescriptorBehind) {
  const int n = settings().rapid_connections;
  int connected = 0;
  for (int i = 0; i < n; ++i) {
    Fd fd = ConnectRaw(target().socket_path());
    if (!fd) continue;
    ++connected;
    if (i % 2 == 1) (void)SendAll(fd.get(), Http2ClientStart());  // half of them say hello first
  }
  EXPECT_EQ(connected, n) << "the agent stopped accepting connections";
  ExpectStatusServed(target());
  ExpectBackToRest();
}

}  // namespace
}  // namespace memprof::integration
