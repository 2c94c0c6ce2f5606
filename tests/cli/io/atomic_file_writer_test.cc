#include "cli/io/atomic_file_writer.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>

#include "common/path.h"
#include "tests/cli/testing/cli_test_util.h"

namespace memprof::cli {
namespace {

using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

TEST(AtomicFileWriterTest, CommitRenamesTheTempFileIntoPlace) {
  TempDir dir;
  const std::string path = dir.File("profile.heap");
  auto writer = AtomicFileWriter::Create(path);
  ASSERT_TRUE(writer) << writer.error().message;
  // tmpfs and ext4 have O_TMPFILE: the data has no name while it is written.
  EXPECT_TRUE(writer->anonymous());
  EXPECT_EQ(dir.List(), std::vector<std::string>{});
  ASSERT_TRUE(writer->Write("heap_v2/524288\n"));
  ASSERT_TRUE(writer->Write("more"));
  // Nothing visible under the final name before Commit().
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
  ASSERT_TRUE(writer->Commit());
  EXPECT_EQ(ReadFile(path), "heap_v2/524288\nmore");
  EXPECT_EQ(dir.List(), std::vector<std::string>{"profile.heap"});
}

TEST(AtomicFileWriterTest, FinalModeIsPrivateWhateverTheUmask) {
  TempDir dir;
  const mode_t old_mask = ::umask(0);
  auto writer = AtomicFileWriter::Create(dir.File("f"));
  ::umask(old_mask);
  ASSERT_TRUE(writer);
  struct stat st {};
  ASSERT_EQ(::stat(writer->temp_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // private while being written
  ASSERT_TRUE(writer->Commit());
  ASSERT_EQ(::stat(dir.File("f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(AtomicFileWriterTest, DestroyingWithoutCommitLeavesNothingAndKeepsTheOldFile) {
  TempDir dir;
  const std::string path = dir.File("profile.heap");
  WriteFile(path, "old contents");
  {
    auto writer = AtomicFileWriter::Create(path);
    ASSERT_TRUE(writer);
    ASSERT_TRUE(writer->Write("partial new contents"));
    EXPECT_EQ(dir.List(), std::vector<std::string>{"profile.heap"}) << "no visible temp file";
  }
  EXPECT_EQ(dir.List(), std::vector<std::string>{"profile.heap"});
  EXPECT_EQ(ReadFile(path), "old contents");
}

TEST(AtomicFileWriterTest, CommitReplacesAnExistingFileAndLeavesNoTempName) {
  TempDir dir;
  const std::string path = dir.File("profile.heap");
  WriteFile(path, "old contents");
  auto writer = AtomicFileWriter::Create(path);
  ASSERT_TRUE(writer);
  ASSERT_TRUE(writer->Write("new contents"));
  ASSERT_TRUE(writer->Commit());
  EXPECT_EQ(ReadFile(path), "new contents");
  EXPECT_EQ(dir.List(), std::vector<std::string>{"profile.heap"});
}

TEST(AtomicFileWriterTest, AKilledWriterLeavesNothingBehind) {
  TempDir dir;
  const std::string path = dir.File("profile.heap");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto writer = AtomicFileWriter::Create(path);
    if (!writer || !writer->Write(std::string(1 << 20, 'x'))) ::_exit(1);
    ::kill(::getpid(), SIGKILL);  // dies with the data written, before Commit()
    ::_exit(2);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer failed before it was killed";
  EXPECT_EQ(dir.List(), std::vector<std::string>{});
}

TEST(AtomicFileWriterTest, MovedFromWriterDoesNotDeleteTheTempFile) {
  TempDir dir;
  std::optional<AtomicFileWriter> moved;
  {
    auto writer = AtomicFileWriter::Create(dir.File("f"));
    ASSERT_TRUE(writer);
    moved.emplace(std::move(*writer));
  }  // destroys the moved-from writer
  ASSERT_TRUE(moved->Write("x"));
  ASSERT_TRUE(moved->Commit());
  EXPECT_EQ(ReadFile(dir.File("f")), "x");
}

// A usage error (exit 2), as a missing --out-dir is: one mistake, one code.
TEST(AtomicFileWriterTest, MissingDirectoryIsAUsageErrorNamingIt) {
  TempDir dir;
  const std::string path = dir.File("no/such/dir/profile.heap");
  auto writer = AtomicFileWriter::Create(path);
  ASSERT_FALSE(writer);
  EXPECT_EQ(writer.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(writer.error().message, "output path '" + path + "': directory '" +
                                        dir.File("no/such/dir") +
                                        "' does not exist; create it first (mkdir -p)");
  EXPECT_TRUE(dir.List().empty());
}

TEST(AtomicFileWriterTest, DirectoryThatIsAFileIsAUsageError) {
  TempDir dir;
  WriteFile(dir.File("file"), "x");
  auto writer = AtomicFileWriter::Create(dir.File("file/profile.heap"));
  ASSERT_FALSE(writer);
  EXPECT_EQ(writer.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(writer.error().message.find("'" + dir.File("file") + "' is not a directory"),
            std::string::npos)
      << writer.error().message;
  EXPECT_EQ(ReadFile(dir.File("file")), "x");
}

// Without --force an existing file is refused before anything is written,
// and kept even when it appears while the data is being written.
TEST(AtomicFileWriterTest, RefusedExistingFileStaysAsItWas) {
  TempDir dir;
  const std::string path = dir.File("p.heap");
  WriteFile(path, "old");
  auto refused = AtomicFileWriter::Create(path, ExistingFile::kRefuse);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message, "output file '" + path +
                                         "' already exists; add --force to replace it, or name "
                                         "another file");
  ::unlink(path.c_str());
  auto writer = AtomicFileWriter::Create(path, ExistingFile::kRefuse);
  ASSERT_TRUE(writer) << writer.error().message;
  ASSERT_TRUE(writer->Write("new"));
  WriteFile(path, "appeared meanwhile");
  auto committed = writer->Commit();
  ASSERT_FALSE(committed);
  EXPECT_NE(committed.error().message.find("already exists"), std::string::npos);
  writer = Result<AtomicFileWriter>(std::unexpected(Error(ErrorCode::kInternal, "dropped")));
  EXPECT_EQ(ReadFile(path), "appeared meanwhile");
  EXPECT_EQ(dir.List(), std::vector<std::string>{"p.heap"}) << "temp file left behind";
}

TEST(AtomicFileWriterTest, RefuseStillWritesANewFile) {
  TempDir dir;
  auto writer = AtomicFileWriter::Create(dir.File("p.heap"), ExistingFile::kRefuse);
  ASSERT_TRUE(writer) << writer.error().message;
  ASSERT_TRUE(writer->Write("new"));
  ASSERT_TRUE(writer->Commit());
  EXPECT_EQ(ReadFile(dir.File("p.heap")), "new");
  EXPECT_EQ(dir.List(), std::vector<std::string>{"p.heap"});
}

TEST(AtomicFileWriterTest, DirectoryAsDestinationIsAUsageError) {
  TempDir dir;
  auto writer = AtomicFileWriter::Create(dir.path());
  ASSERT_FALSE(writer);
  EXPECT_EQ(writer.error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(dir.List().empty());
}

// Renaming over a device or FIFO would replace it (think /dev/null as root).
TEST(AtomicFileWriterTest, NonRegularDestinationIsAUsageErrorAndStaysPut) {
  TempDir dir;
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/null")}) {
    auto writer = AtomicFileWriter::Create(path);
    ASSERT_FALSE(writer) << path;
    EXPECT_EQ(writer.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(writer.error().message.find("is not a regular file"), std::string::npos)
        << writer.error().message;
  }
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(dir.List(), std::vector<std::string>{"fifo"});
}

TEST(AtomicFileWriterTest, UnwritableDirectoryIsPermissionDenied) {
  // sysfs refuses new files even to root.
  auto writer = AtomicFileWriter::Create("/sys/memprof-test.heap");
  ASSERT_FALSE(writer);
  EXPECT_EQ(writer.error().code, ErrorCode::kPermissionDenied) << writer.error().message;
  EXPECT_NE(writer.error().message.find("/sys"), std::string::npos);
}

TEST(AtomicFileWriterTest, ReadOnlyDirectoryForNonRootIsPermissionDenied) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  TempDir dir;
  const std::string sub = dir.File("ro");
  ASSERT_EQ(::mkdir(sub.c_str(), 0555), 0);
  auto writer = AtomicFileWriter::Create(sub + "/f");
  ASSERT_FALSE(writer);
  EXPECT_EQ(writer.error().code, ErrorCode::kPermissionDenied);
}

TEST(AtomicFileWriterTest, CommitNewNeverReplacesAndKeepsTheDataForAnotherName) {
  TempDir dir;
  testing::WriteFile(dir.File("taken"), "precious");
  auto writer = AtomicFileWriter::Create(dir.File("taken"));
  ASSERT_TRUE(writer);
  ASSERT_TRUE(writer->Write("new data"));
  auto first = writer->CommitNew(dir.File("taken"));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_FALSE(*first) << "the name is taken";
  EXPECT_EQ(testing::ReadFile(dir.File("taken")), "precious");
  auto second = writer->CommitNew(dir.File("free"));
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_TRUE(*second);
  EXPECT_EQ(writer->path(), dir.File("free"));
  EXPECT_EQ(testing::ReadFile(dir.File("free")), "new data");
  EXPECT_EQ(dir.List(), (std::vector<std::string>{"free", "taken"})) << "no temp name left";
  struct stat st {};
  ASSERT_EQ(::stat(dir.File("free").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(writer->CommitNew(dir.File("again"))) << "committed once only";
}

TEST(AtomicFileWriterTest, CommitNewStaysInTheDirectoryOfCreate) {
  TempDir dir;
  ASSERT_EQ(::mkdir(dir.File("sub").c_str(), 0700), 0);
  auto writer = AtomicFileWriter::Create(dir.File("a"));
  ASSERT_TRUE(writer);
  EXPECT_FALSE(writer->CommitNew(dir.File("sub/b")));
}

// The writer's temp file and its directory sync use the path's directory.
TEST(AtomicFileWriterTest, DirectoryOf) {
  EXPECT_EQ(PathDirname("profile.heap"), ".");
  EXPECT_EQ(PathDirname("/profile.heap"), "/");
  EXPECT_EQ(PathDirname("a/b/c"), "a/b");
}

}  // namespace
}  // namespace memprof::cli
