// The service and the on-demand server, exercised through a real gRPC
// connection over a socketpair.
#include "agent/service/memory_profile_service.h"

#include <fcntl.h>
#include <grpcpp/create_channel_posix.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "agent/heap/heap_engine.h"
#include "agent/service/on_demand_server.h"
#include "agent/service/peer_registry.h"
#include "common/sha256.h"
#include "common/unix_socket.h"
#include "tests/agent/support/test_allocations.h"
#include "tests/support/wait_until.h"

namespace memprof::agent {

using test_support::WaitUntil;

namespace {

class MemoryProfileServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = std::make_unique<HeapEngine>(
        HeapEngineOptions{.malloc_conf = "prof:true",
                          .started_by = "",
                          .dump_limits = {.max_active = 2}});
    allocator_ = &engine_->allocator();
    profiling_ = &engine_->profiling();
    dumps_ = &engine_->dumps();
    // The agent's own authorization path: the peer registry, filled in
    // Connect() with the credentials of the test's end of the socketpair.
    service_ = std::make_unique<MemoryProfileService>(
        *engine_, [this](const CallPeer& peer) { return peers_.Refusal(peer.address); });
    server_ = std::make_unique<OnDemandServer>(*service_, service_->calls(),
                                               std::chrono::milliseconds(200),
                                               [this] { service_->ReleaseLingeringDumps(); });
    Connect();
  }
  void TearDown() override {
    stub_.reset();
    server_.reset();
    (void)profiling_->Deactivate();
  }

  // Connects as this process, or as `as` (the credentials the acceptor would
  // have read with SO_PEERCRED).
  void Connect(std::optional<PeerCredentials> as = std::nullopt) {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
    auto real = GetPeerCredentials(sv[0]);
    ASSERT_TRUE(real);
    peers_.Record(sv[0], as.value_or(*real));
    ASSERT_TRUE(server_->Adopt(Fd(sv[0])));
    stub_ = v1::MemoryProfile::NewStub(grpc::CreateInsecureChannelFromFd("test", sv[1]));
  }

  PeerRegistry peers_{::geteuid()};
  std::unique_ptr<HeapEngine> engine_;
  const Allocator* allocator_ = nullptr;
  ProfilingController* profiling_ = nullptr;
  DumpStreamer* dumps_ = nullptr;
  std::unique_ptr<MemoryProfileService> service_;
  std::unique_ptr<OnDemandServer> server_;
  std::unique_ptr<v1::MemoryProfile::Stub> stub_;
};

TEST_F(MemoryProfileServiceTest, StatusDescribesProcessAndAllocator) {
  grpc::ClientContext ctx;
  v1::StatusResponse r;
  ASSERT_TRUE(stub_->Status(&ctx, {}, &r).ok());
  EXPECT_EQ(r.pid(), ::getpid());
  EXPECT_EQ(r.allocator(), v1::ALLOCATOR_KIND_JEMALLOC);
  EXPECT_TRUE(r.profiling_supported());
  EXPECT_TRUE(r.profiling_enabled());
  EXPECT_FALSE(r.profiling_active());
  EXPECT_EQ(r.sample_interval_bytes(), 1024u);
  EXPECT_EQ(r.malloc_conf(), "prof:true");
  EXPECT_GT(r.rss_bytes(), 0u);
  EXPECT_FALSE(r.executable().empty());
}

TEST_F(MemoryProfileServiceTest, AnotherUsersPeerIsAnsweredPermissionDenied) {
  const uid_t other = ::geteuid() + 1;
  Connect(PeerCredentials{::getpid(), other, other});
  const std::string expected = "uid " + std::to_string(other) + " (pid " +
                               std::to_string(::getpid()) + ") may not use this memprof agent";
  grpc::ClientContext c1;
  v1::StatusResponse status;
  grpc::Status s = stub_->Status(&c1, {}, &status);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(s.error_message().find(expected), std::string::npos) << s.error_message();
  EXPECT_EQ(status.pid(), 0) << "nothing about the process is revealed";

  grpc::ClientContext c2;
  v1::ActivateResponse activate;
  EXPECT_EQ(stub_->Activate(&c2, {}, &activate).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_FALSE(allocator_->Info().profiling_active) << "a refused activate changed nothing";

  grpc::ClientContext c3;
  auto reader = stub_->Dump(&c3, {});
  v1::DumpChunk chunk;
  EXPECT_FALSE(reader->Read(&chunk));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(dumps_->DumpsServed(), 0u);
}

TEST_F(MemoryProfileServiceTest, RootIsServed) {
  Connect(PeerCredentials{1, 0, 0});
  grpc::ClientContext ctx;
  v1::StatusResponse r;
  EXPECT_TRUE(stub_->Status(&ctx, {}, &r).ok());
}

TEST_F(MemoryProfileServiceTest, ActivateRejectsOutOfBoundsWindow) {
  grpc::ClientContext ctx;
  v1::ActivateRequest req;
  req.set_duration_ms(10);
  v1::ActivateResponse r;
  grpc::Status s = stub_->Activate(&ctx, req, &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("outside"), std::string::npos) << s.error_message();
}

TEST_F(MemoryProfileServiceTest, ActivateThenDeactivateReportStates) {
  grpc::ClientContext c1, c2;
  v1::ActivateRequest req;
  req.set_duration_ms(60000);
  v1::ActivateResponse a;
  ASSERT_TRUE(stub_->Activate(&c1, req, &a).ok());
  EXPECT_TRUE(a.current().active());
  EXPECT_GT(a.current().window_end_unix_ms(), 0);
  v1::DeactivateResponse d;
  ASSERT_TRUE(stub_->Deactivate(&c2, {}, &d).ok());
  EXPECT_TRUE(d.previous().active());
  EXPECT_FALSE(d.current().active());
}

TEST_F(MemoryProfileServiceTest, GenerationIsReportedAndGuardsConditionalChanges) {
  grpc::ClientContext c1, c2, c3, c4, c5;
  v1::StatusResponse status;
  ASSERT_TRUE(stub_->Status(&c1, {}, &status).ok());
  EXPECT_NE(status.activation_generation(), 0u);
  v1::ActivateRequest activate;
  activate.set_duration_ms(60000);
  v1::ActivateResponse a;
  ASSERT_TRUE(stub_->Activate(&c2, activate, &a).ok());
  EXPECT_EQ(a.activation_generation(), status.activation_generation() + 1);
  // A stale generation: refused, and profiling stays as it is.
  v1::DeactivateRequest stale;
  stale.set_if_generation(status.activation_generation());
  v1::DeactivateResponse d;
  grpc::Status refused = stub_->Deactivate(&c3, stale, &d);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("changed by someone else"), std::string::npos)
      << refused.error_message();
  EXPECT_TRUE(profiling_->WindowEndUnixMs() > 0) << "the window is still open";
  // The current generation: served.
  v1::DeactivateRequest current;
  current.set_if_generation(a.activation_generation());
  ASSERT_TRUE(stub_->Deactivate(&c4, current, &d).ok());
  EXPECT_FALSE(d.current().active());
  EXPECT_EQ(d.activation_generation(), a.activation_generation() + 1);
  ASSERT_TRUE(stub_->Status(&c5, {}, &status).ok());
  EXPECT_EQ(status.activation_generation(), d.activation_generation());
}

TEST_F(MemoryProfileServiceTest, ActivateSetsTheSampleIntervalThroughAReset) {
  grpc::ClientContext c1, c2, c3;
  v1::ActivateRequest req;
  req.set_sample_interval_bytes(4096);
  v1::ActivateResponse a;
  ASSERT_TRUE(stub_->Activate(&c1, req, &a).ok());
  EXPECT_EQ(a.previous_sample_interval_bytes(), 1024u);
  EXPECT_EQ(a.sample_interval_bytes(), 4096u);
  EXPECT_TRUE(a.samples_reset());
  v1::StatusResponse status;
  ASSERT_TRUE(stub_->Status(&c2, {}, &status).ok());
  EXPECT_EQ(status.sample_interval_bytes(), 4096u) << "Status shows the new interval";
  // Back to the start-up interval for the other tests, with an explicit reset.
  req.set_sample_interval_bytes(1024);
  req.set_reset(true);
  ASSERT_TRUE(stub_->Activate(&c3, req, &a).ok());
  EXPECT_EQ(a.sample_interval_bytes(), 1024u);
  EXPECT_TRUE(a.samples_reset());
}

TEST_F(MemoryProfileServiceTest, ActivateRejectsASampleIntervalThatIsNotAPowerOfTwo) {
  grpc::ClientContext ctx;
  v1::ActivateRequest req;
  req.set_sample_interval_bytes(1000);
  v1::ActivateResponse r;
  grpc::Status s = stub_->Activate(&ctx, req, &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("1000 bytes is not a power of two"), std::string::npos)
      << s.error_message();
  EXPECT_FALSE(allocator_->Info().profiling_active) << "a rejected activate changed nothing";
  EXPECT_EQ(allocator_->Info().sample_interval_bytes, 1024u);
}

TEST_F(MemoryProfileServiceTest, DumpStreamsMetadataDataAndVerifiableTrailer) {
  ASSERT_TRUE(profiling_->Activate(std::nullopt));
  UseUpSampleCountdown();
  auto blocks = AllocateForProfile(256, 4096);
  grpc::ClientContext ctx;
  v1::DumpRequest req;
  req.set_chunk_size_bytes(1);  // clamped up to the minimum chunk
  auto reader = stub_->Dump(&ctx, req);
  v1::DumpChunk chunk;
  ASSERT_TRUE(reader->Read(&chunk));
  ASSERT_TRUE(chunk.has_metadata());
  // Streamed while jemalloc writes it: the size is the trailer's to tell.
  EXPECT_EQ(chunk.metadata().size_bytes(), 0u);
  EXPECT_EQ(chunk.metadata().format(), "jemalloc_heap_v2");
  EXPECT_EQ(chunk.metadata().pid(), ::getpid());
  std::string data;
  v1::DumpTrailer trailer;
  while (reader->Read(&chunk)) {
    if (chunk.has_data()) {
      EXPECT_LE(chunk.data().size(), 4096u);
      data += chunk.data();
    }
    if (chunk.has_trailer()) trailer = chunk.trailer();
  }
  ASSERT_TRUE(reader->Finish().ok());
  FreeAll(blocks);
  EXPECT_EQ(data.rfind("heap_v2/", 0), 0u);
  EXPECT_EQ(trailer.size_bytes(), data.size());
  Sha256 sha;
  sha.Update(data);
  EXPECT_EQ(trailer.sha256_hex(), sha.FinalHex());
}

// How many descriptors of this process are the agent's dump files (the
// service here shares the test's descriptor table).
int DumpFilesOpen() {
  int count = 0;
  std::error_code ec;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    std::error_code link_ec;
    const std::string target = std::filesystem::read_symlink(fd.path(), link_ec).string();
    if (target.find("memprof-heap-dump") != std::string::npos) ++count;
  }
  return count;
}

// A client on the same host asks to copy the file itself: the metadata names
// it, progress replaces data, the trailer has no checksum, and the agent
// keeps the file a moment after the stream, then lets it go.
TEST_F(MemoryProfileServiceTest, ALocalClientIsToldWhereTheFileIsAndHowFarItIsWritten) {
  ASSERT_TRUE(profiling_->Activate(std::nullopt));
  UseUpSampleCountdown();
  auto blocks = AllocateForProfile(256, 4096);
  grpc::ClientContext ctx;
  v1::DumpRequest req;
  req.set_local_file(true);
  req.set_chunk_size_bytes(4096);
  auto reader = stub_->Dump(&ctx, req);
  v1::DumpChunk chunk;
  ASSERT_TRUE(reader->Read(&chunk));
  ASSERT_TRUE(chunk.has_metadata());
  const v1::DumpMetadata meta = chunk.metadata();
  ASSERT_NE(meta.file_inode(), 0u);
  ASSERT_GT(meta.file_thread(), 0);
  const std::string path = "/proc/self/task/" + std::to_string(meta.file_thread()) + "/fd/" +
                           std::to_string(meta.file_descriptor());
  Fd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(file) << path << ": " << std::strerror(errno);
  struct stat st {};
  ASSERT_EQ(::fstat(file.get(), &st), 0);
  EXPECT_EQ(st.st_ino, meta.file_inode());
  EXPECT_EQ(st.st_dev, meta.file_device());
  std::vector<uint64_t> written;
  v1::DumpTrailer trailer;
  while (reader->Read(&chunk)) {
    EXPECT_FALSE(chunk.has_data());
    if (chunk.has_progress()) written.push_back(chunk.progress().written_bytes());
    if (chunk.has_trailer()) trailer = chunk.trailer();
  }
  ASSERT_TRUE(reader->Finish().ok());
  FreeAll(blocks);
  ASSERT_FALSE(written.empty());
  for (size_t i = 1; i + 1 < written.size(); ++i) {
    EXPECT_GE(written[i], written[i - 1] + 4096) << "at least a chunk more each time";
  }
  EXPECT_EQ(written.back(), trailer.size_bytes());
  EXPECT_TRUE(trailer.sha256_hex().empty());
  std::string data(trailer.size_bytes(), '\0');
  ASSERT_EQ(::pread(file.get(), data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  EXPECT_EQ(data.rfind("heap_v2/", 0), 0u);
  file.Reset();
  EXPECT_EQ(DumpFilesOpen(), 1) << "the agent still holds it, so that it frees the pages";
  EXPECT_TRUE(WaitUntil([] { return DumpFilesOpen() == 0; }, std::chrono::seconds(5)));
}

// The linger on its own: a dump is freed after the grace period, or at once
// by ReleaseAll, and counts as a call in flight until then.
TEST(DumpLingerTest, FreesAfterTheGraceOrAtOnceWhenReleased) {
  CallTracker calls;
  DumpLinger linger(calls, std::chrono::milliseconds(100));
  auto dump_file = [] {
    Fd file(::memfd_create("memprof-heap-dump", MFD_CLOEXEC));
    EXPECT_TRUE(file);
    return std::make_unique<HeapDump>(std::move(file), 0, 1, 0);
  };
  linger.Hold(dump_file());
  EXPECT_EQ(DumpFilesOpen(), 1);
  EXPECT_EQ(calls.in_flight(), 1);
  EXPECT_TRUE(WaitUntil([&] { return linger.held() == 0; }, std::chrono::seconds(5)));
  EXPECT_EQ(DumpFilesOpen(), 0);
  EXPECT_EQ(calls.in_flight(), 0);

  DumpLinger slow(calls, std::chrono::hours(1));
  slow.Hold(dump_file());
  slow.Hold(dump_file());
  EXPECT_EQ(DumpFilesOpen(), 2);
  slow.ReleaseAll();
  EXPECT_EQ(slow.held(), 0u);
  EXPECT_EQ(DumpFilesOpen(), 0);
  EXPECT_EQ(calls.in_flight(), 0);
}

// Reads a whole Dump stream: its status and the data bytes.
struct DumpOutcome {
  grpc::Status status;
  std::string data;
  bool trailer = false;
};

DumpOutcome ReadDump(v1::MemoryProfile::Stub& stub, grpc::ClientContext& ctx) {
  DumpOutcome out;
  auto reader = stub.Dump(&ctx, {});
  v1::DumpChunk chunk;
  while (reader->Read(&chunk)) {
    if (chunk.has_data()) out.data += chunk.data();
    if (chunk.has_trailer()) out.trailer = true;
  }
  out.status = reader->Finish();
  return out;
}

TEST_F(MemoryProfileServiceTest, ABusyAgentQueuesADumpAndTakesItOnlyWhenASlotFrees) {
  ASSERT_TRUE(profiling_->Activate(std::nullopt));
  // Both slots held (as by two clients streaming).
  auto first = dumps_->Dump();
  auto second = dumps_->Dump();
  ASSERT_TRUE(first && second);
  DumpOutcome outcome;
  grpc::ClientContext ctx;
  std::thread client([&] { outcome = ReadDump(*stub_, ctx); });
  ASSERT_TRUE(WaitUntil([&] { return dumps_->queue().waiting() == 1; }, std::chrono::seconds(10)))
      << "the third dump was not queued";
  // Waiting costs no dump: none is taken before the turn comes.
  EXPECT_EQ(dumps_->DumpsServed(), 2u);
  EXPECT_EQ(dumps_->queue().active(), 2);
  first->reset();  // a slot frees: the waiter gets it
  client.join();
  EXPECT_TRUE(outcome.status.ok()) << outcome.status.error_message();
  EXPECT_TRUE(outcome.trailer);
  EXPECT_TRUE(outcome.data.starts_with("heap_v2/"));
  EXPECT_EQ(dumps_->DumpsServed(), 3u);
  EXPECT_EQ(dumps_->queue().waiting(), 0);
  second->reset();
  EXPECT_TRUE(WaitUntil([&] { return dumps_->queue().active() == 0; }, std::chrono::seconds(10)));
}

TEST_F(MemoryProfileServiceTest, AWaiterWhoseDeadlinePassesLeavesTheQueueHoldingNothing) {
  ASSERT_TRUE(profiling_->Activate(std::nullopt));
  auto first = dumps_->Dump();
  auto second = dumps_->Dump();
  ASSERT_TRUE(first && second);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
  DumpOutcome outcome = ReadDump(*stub_, ctx);
  EXPECT_EQ(outcome.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(WaitUntil([&] { return dumps_->queue().waiting() == 0; }, std::chrono::seconds(10)))
      << "the expired waiter is still queued";
  EXPECT_EQ(dumps_->queue().active(), 2) << "leaving the queue freed a slot it never held";
  EXPECT_EQ(dumps_->DumpsServed(), 2u);
  // Its turn never comes: freeing both slots takes no dump for it.
  first->reset();
  second->reset();
  EXPECT_EQ(dumps_->queue().active(), 0);
  EXPECT_EQ(dumps_->DumpsServed(), 2u);
}

TEST_F(MemoryProfileServiceTest, AWaiterThatCancelsLeavesTheQueue) {
  ASSERT_TRUE(profiling_->Activate(std::nullopt));
  auto first = dumps_->Dump();
  auto second = dumps_->Dump();
  ASSERT_TRUE(first && second);
  DumpOutcome outcome;
  grpc::ClientContext ctx;
  std::thread client([&] { outcome = ReadDump(*stub_, ctx); });
  ASSERT_TRUE(WaitUntil([&] { return dumps_->queue().waiting() == 1; }, std::chrono::seconds(10)));
  ctx.TryCancel();
  client.join();
  EXPECT_EQ(outcome.status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(WaitUntil([&] { return dumps_->queue().waiting() == 0; }, std::chrono::seconds(10)));
  EXPECT_EQ(dumps_->queue().active(), 2);
  EXPECT_TRUE(
      WaitUntil([&] { return service_->calls().in_flight() == 0; }, std::chrono::seconds(10)))
      << "the cancelled call never ended";
}

TEST_F(MemoryProfileServiceTest, StatsSummaryAndRawJson) {
  grpc::ClientContext ctx;
  v1::StatsRequest req;
  req.set_raw_format(v1::RAW_STATS_FORMAT_JSON);
  v1::StatsResponse r;
  ASSERT_TRUE(stub_->Stats(&ctx, req, &r).ok());
  EXPECT_EQ(r.allocator(), v1::ALLOCATOR_KIND_JEMALLOC);
  EXPECT_GT(r.summary().allocated(), 0u);
  EXPECT_EQ(r.raw_format(), v1::RAW_STATS_FORMAT_JSON);
  EXPECT_EQ(r.raw().front(), '{');
  ASSERT_TRUE(r.has_profiling_active()) << "the exporter reads it instead of calling Status";
  EXPECT_EQ(r.profiling_active(), allocator_->Info().profiling_active);
}

TEST_F(MemoryProfileServiceTest, ServerStopsWhenIdleAndRestartsOnDemand) {
  grpc::ClientContext c1;
  v1::StatusResponse r;
  ASSERT_TRUE(stub_->Status(&c1, {}, &r).ok());
  ASSERT_TRUE(server_->serving());
  EXPECT_TRUE(WaitUntil([&] { server_->Tick(); return !server_->serving(); },
                        std::chrono::seconds(5)));
  Connect();
  grpc::ClientContext c2;
  EXPECT_TRUE(stub_->Status(&c2, {}, &r).ok());
}

// Watch: the state of now at once, then a new event for each change
// (here: an allocation window opened, then ended by the fetch of its
// profile, then handed over), and the stream keeps the on-demand server up
// until the client cancels it.
TEST_F(MemoryProfileServiceTest, WatchPushesEachChangeOfTheWindowsAndKeepsTheServerUp) {
  grpc::ClientContext watch_ctx;
  auto reader = stub_->Watch(&watch_ctx, v1::WatchRequest());
  v1::WatchEvent event;
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.allocation_window().open_window(), 0u);
  EXPECT_FALSE(event.capture().armed());
  EXPECT_GT(event.sent_unix_ms(), 0);

  grpc::ClientContext open_ctx;
  v1::AllocationWindowRequest open;
  open.set_duration_ms(60000);
  v1::AllocationWindowResponse opened;
  ASSERT_TRUE(stub_->OpenAllocationWindow(&open_ctx, open, &opened).ok());
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.allocation_window().open_window(), opened.window());

  grpc::ClientContext dump_ctx;
  v1::DumpRequest fetch;
  fetch.set_allocation_window(opened.window());
  auto dump = stub_->Dump(&dump_ctx, fetch);
  v1::DumpChunk chunk;
  while (dump->Read(&chunk)) {
  }
  ASSERT_TRUE(dump->Finish().ok());
  // Ended (its profile held), then handed over: at most two events, the
  // last one current.
  bool handed_over = false;
  for (int i = 0; i < 2 && !handed_over; ++i) {
    ASSERT_TRUE(reader->Read(&event));
    handed_over = event.allocation_window().open_window() == 0 &&
                  event.allocation_window().held_profile() == 0;
  }
  EXPECT_TRUE(handed_over) << event.DebugString();

  // A watch in flight: idle ticks leave the server up.
  server_->Tick();
  EXPECT_TRUE(server_->serving());
  watch_ctx.TryCancel();
  while (reader->Read(&event)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(
      WaitUntil([&] { return service_->calls().in_flight() == 0; }, std::chrono::seconds(5)));
}

TEST_F(MemoryProfileServiceTest, WatchIsRefusedToAnotherUser) {
  Connect(PeerCredentials{.pid = ::getpid(), .uid = ::geteuid() + 1, .gid = ::getegid()});
  grpc::ClientContext ctx;
  auto reader = stub_->Watch(&ctx, v1::WatchRequest());
  v1::WatchEvent event;
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

}  // namespace

}  // namespace memprof::agent
