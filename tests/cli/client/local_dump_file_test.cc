#include "cli/client/local_dump_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "cli/client/dump_receiver.h"
#include "cli/client/dump_transfer.h"
#include "common/fd.h"
#include "common/sha256.h"
#include "tests/cli/testing/fake_profile_client.h"
#include "tests/support/temp_dir.h"

namespace memprof::cli {
namespace {

using memprof::v1::DumpChunk;

std::string Sha256Of(const std::string& data) {
  Sha256 hash;
  hash.Update(data);
  return hash.FinalHex();
}

// An agent's dump file, played by a memfd of this process: the receiver
// opens it through /proc/<our pid>/fd/<n>, as it would the agent's.
class LocalDumpFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = Fd(::memfd_create("local-dump-file-test", MFD_CLOEXEC));
    ASSERT_TRUE(file_);
  }

  void Append(const std::string& data) {
    ASSERT_TRUE(WriteAll(file_.get(), data, "the test file"));
    content_ += data;
  }

  DumpChunk Metadata() const {
    struct stat st {};
    EXPECT_EQ(::fstat(file_.get(), &st), 0);
    DumpChunk chunk;
    auto* meta = chunk.mutable_metadata();
    meta->set_format("jemalloc_heap_v2");
    meta->set_pid(::getpid());
    meta->set_sequence(3);
    meta->set_file_descriptor(file_.get());
    meta->set_file_device(st.st_dev);
    meta->set_file_inode(st.st_ino);
    return chunk;
  }

  static DumpChunk Progress(uint64_t written) {
    DumpChunk chunk;
    chunk.mutable_progress()->set_written_bytes(written);
    return chunk;
  }

  static DumpChunk Trailer(uint64_t size) {
    DumpChunk chunk;
    chunk.mutable_trailer()->set_size_bytes(size);
    return chunk;
  }

  Result<void> Feed(const std::vector<DumpChunk>& chunks) {
    for (const DumpChunk& chunk : chunks) {
      if (auto ok = receiver_.OnChunk(chunk); !ok) return ok;
    }
    return {};
  }

  Fd file_;
  std::string content_;
  std::string written_;
  DumpReceiver receiver_{[this](std::string_view data) -> Result<void> {
                           written_.append(data);
                           return {};
                         },
                         ::getpid()};
};

TEST_F(LocalDumpFileTest, CopiesWhatEachProgressSaysAndTheRestAtTheTrailer) {
  ASSERT_TRUE(receiver_.OnChunk(Metadata()));
  Append(std::string(3000000, 'a'));
  ASSERT_TRUE(receiver_.OnChunk(Progress(2500000)));
  EXPECT_EQ(written_.size(), 2500000u);  // no more than the agent said was written
  Append("heap_v2 tail\n");
  ASSERT_TRUE(receiver_.OnChunk(Progress(content_.size())));
  Append("MAPPED_LIBRARIES:\n");
  ASSERT_TRUE(receiver_.OnChunk(Trailer(content_.size())));
  auto summary = receiver_.Finish();
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(written_, content_);
  EXPECT_EQ(summary->size_bytes, content_.size());
  EXPECT_EQ(summary->sha256_hex, Sha256Of(content_));
  EXPECT_EQ(summary->pid, ::getpid());
}

TEST_F(LocalDumpFileTest, AnAgentChecksumIsStillChecked) {
  Append("heap_v2/524288\n");
  auto trailer = Trailer(content_.size());
  trailer.mutable_trailer()->set_sha256_hex(std::string(64, '0'));
  ASSERT_TRUE(Feed({Metadata(), trailer}));
  auto summary = receiver_.Finish();
  ASSERT_FALSE(summary);
  EXPECT_EQ(summary.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(summary.error().message.find("checksum mismatch"), std::string::npos);
}

TEST_F(LocalDumpFileTest, AFileShorterThanTheAgentSaysIsDataLoss) {
  Append("heap_v2/524288\n");
  ASSERT_TRUE(receiver_.OnChunk(Metadata()));
  auto ok = receiver_.OnChunk(Progress(content_.size() + 10));
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, ErrorCode::kDataLoss);
  EXPECT_EQ(ok.error().message,
            "heap profile transfer failed: the agent's dump file ends at 15 bytes, before the 25 "
            "it said were written");
}

TEST_F(LocalDumpFileTest, TheNamedThreadIsAskedFirstAndEveryThreadAfter) {
  Append("heap_v2/524288\n");
  for (pid_t thread : {static_cast<pid_t>(::gettid()), pid_t{0}, pid_t{999999}}) {
    auto metadata = Metadata();
    metadata.mutable_metadata()->set_file_thread(thread);
    auto opened = LocalDumpFile::Open(::getpid(), metadata.metadata());
    ASSERT_TRUE(opened) << "thread " << thread << ": " << opened.error().message;
    std::string copied;
    ASSERT_TRUE(opened->CopyUpTo(content_.size(), [&](std::string_view data) -> Result<void> {
      copied.append(data);
      return {};
    }));
    EXPECT_EQ(copied, content_);
  }
}

TEST_F(LocalDumpFileTest, AnotherFileAtTheNamedDescriptorIsNotTakenForIt) {
  auto metadata = Metadata();
  metadata.mutable_metadata()->set_file_inode(metadata.metadata().file_inode() + 1);
  auto ok = receiver_.OnChunk(metadata);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(ok.error().message, "no thread of the agent holds its dump file (/proc/" +
                                    std::to_string(::getpid()) + "/task/*/fd/" +
                                    std::to_string(file_.get()) + ")");
  EXPECT_TRUE(receiver_.local_file_refused());  // the caller asks for the bytes instead
  EXPECT_TRUE(written_.empty());
}

// The number the agent named is, in the tables it is looked up in, one of
// the host's files: a FIFO nobody writes to, which a plain open would wait on
// forever. It is looked at, not opened.
TEST_F(LocalDumpFileTest, AHostsFifoAtTheNumberIsNotOpened) {
  auto dir = test_support::TempDir::Create("local-dump-file");
  ASSERT_TRUE(dir);
  const std::string fifo = dir->File("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Fd host_file(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  ASSERT_TRUE(host_file);
  auto metadata = Metadata();
  metadata.mutable_metadata()->set_file_descriptor(host_file.get());
  auto opened = LocalDumpFile::Open(::getpid(), metadata.metadata());
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, ErrorCode::kNotFound);
}

TEST_F(LocalDumpFileTest, AFileThatIsGoneIsRefusedBeforeAnythingIsWritten) {
  auto metadata = Metadata();
  Fd closed(::dup(file_.get()));
  const int number = closed.get();
  closed.Reset();
  metadata.mutable_metadata()->set_file_descriptor(number);
  auto ok = receiver_.OnChunk(metadata);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(receiver_.local_file_refused());
  EXPECT_TRUE(written_.empty());
}

TEST_F(LocalDumpFileTest, DataForANamedFileIsRejected) {
  DumpChunk data;
  data.set_data("heap_v2");
  ASSERT_TRUE(receiver_.OnChunk(Metadata()));
  auto ok = receiver_.OnChunk(data);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().message,
            "heap profile transfer failed: the agent sent data for a file it named");
}

TEST_F(LocalDumpFileTest, ProgressWithoutANamedFileIsRejected) {
  auto metadata = Metadata();
  metadata.mutable_metadata()->clear_file_inode();
  ASSERT_TRUE(receiver_.OnChunk(metadata));
  auto ok = receiver_.OnChunk(Progress(1));
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().message,
            "heap profile transfer failed: the agent sent progress for a file it did not name");
}

TEST_F(LocalDumpFileTest, ANamedFileNobodyAskedForIsRejected) {
  DumpReceiver receiver([](std::string_view) -> Result<void> { return {}; });
  auto ok = receiver.OnChunk(Metadata());
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, ErrorCode::kDataLoss);
}

// StreamDump against an agent that names a file this process cannot find:
// it asks again for the bytes, and writes only what that second stream sent.
TEST_F(LocalDumpFileTest, AFileThatCannotBeOpenedIsAskedForAsBytes) {
  auto named = Metadata();
  Fd closed(::dup(file_.get()));
  named.mutable_metadata()->set_file_descriptor(closed.get());
  closed.Reset();
  testing::FakeProfileClient client;
  client.dump_chunks_for = [&](const memprof::v1::DumpRequest& request) {
    if (request.local_file()) return std::vector<DumpChunk>{named, Progress(1)};
    return testing::MakeDumpStream("heap_v2/524288\n", 4);
  };
  Target target{.pid = ::getpid(), .socket_path = "/nonexistent.sock", .command = "test"};
  std::string out;
  auto summary = StreamDump(
      target, client,
      [&](std::string_view data) -> Result<void> {
        out.append(data);
        return {};
      },
      std::stop_token());
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(out, "heap_v2/524288\n");
  ASSERT_EQ(client.dump_requests.size(), 2u);
  EXPECT_TRUE(client.dump_requests[0].local_file());
  EXPECT_FALSE(client.dump_requests[1].local_file());
}

TEST(StreamDumpTest, OnlyALocalTargetWhoseFilesCanBeOpenedIsAskedToNameItsFile) {
  testing::FakeProfileClient client;
  client.dump_chunks = testing::MakeDumpStream("heap_v2/524288\n", 4);
  const auto sink = [](std::string_view) -> Result<void> { return {}; };
  Target self{.pid = ::getpid(), .socket_path = "/nonexistent.sock", .command = "test"};
  ASSERT_TRUE(StreamDump(self, client, sink, std::stop_token()));
  Target remote = self;
  remote.address = "db1:7070";
  ASSERT_TRUE(StreamDump(remote, client, sink, std::stop_token()));
  Target gone = self;
  gone.pid = 999999999;
  ASSERT_TRUE(StreamDump(gone, client, sink, std::stop_token()));
  // An allocation window's profile is handed over once: never a copy that
  // might have to be asked for again.
  ASSERT_TRUE(StreamDump(self, client, sink, std::stop_token(), 0, 7));
  ASSERT_EQ(client.dump_requests.size(), 4u);
  EXPECT_TRUE(client.dump_requests[0].local_file());
  EXPECT_FALSE(client.dump_requests[1].local_file());
  EXPECT_FALSE(client.dump_requests[2].local_file());
  EXPECT_FALSE(client.dump_requests[3].local_file());
}

TEST(CanOpenFilesOfTest, ThisProcessYesNoProcessNo) {
  EXPECT_TRUE(CanOpenFilesOf(::getpid()));
  EXPECT_FALSE(CanOpenFilesOf(0));
  EXPECT_FALSE(CanOpenFilesOf(-1));
}

}  // namespace
}  // namespace memprof::cli
