// FileLineReader against BufferLineReader, the reader of text in memory:
// the same lines, statuses and offsets, whatever falls on the boundary of
// its buffer.
#include "cli/report/parse/line_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/fd.h"
#include "tests/support/files.h"
#include "tests/support/temp_dir.h"

namespace memprof::report::parse {
namespace {

struct Read {
  LineReader::Status status;
  std::string line;
  size_t line_number;
  bool had_newline;
  size_t bytes_read;

  bool operator==(const Read&) const = default;
};

template <typename Reader>
std::vector<Read> ReadAll(Reader& reader) {
  std::vector<Read> reads;
  for (;;) {
    const LineReader::Status status = reader.Next();
    reads.push_back({status, status == LineReader::Status::kLine ? std::string(reader.line()) : "",
                     reader.line_number(), reader.had_newline(), reader.bytes_read()});
    if (status != LineReader::Status::kLine) return reads;
  }
}

class FileLineReaderTest : public ::testing::Test {
 protected:
  // What a FileLineReader gives for `text` in a file.
  std::vector<Read> FromFile(const std::string& text, size_t max_line_bytes) {
    const std::string path = dir_.File("input");
    EXPECT_TRUE(test_support::WriteFile(path, text));
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    EXPECT_TRUE(fd);
    FileLineReader reader(fd.get(), max_line_bytes);
    return ReadAll(reader);
  }

  static std::vector<Read> FromMemory(const std::string& text, size_t max_line_bytes) {
    BufferLineReader reader(text, max_line_bytes);
    return ReadAll(reader);
  }

  test_support::TempDir dir_;
};

// Several MiB of lines of every length up to 64 KiB, so that lines cross
// the 1 MiB buffer at every sort of place, with and without a last '\n'.
TEST_F(FileLineReaderTest, GivesTheLinesTextInMemoryGives) {
  std::mt19937 random(7);
  std::string text;
  while (text.size() < (size_t{5} << 20)) {
    const size_t length = random() % 4 == 0 ? random() % 65536 : random() % 200;
    for (size_t i = 0; i < length; ++i) text += static_cast<char>('a' + random() % 26);
    text += '\n';
  }
  const std::vector<Read> whole = FromFile(text, 65536);
  EXPECT_GT(whole.size(), 500u);
  EXPECT_EQ(whole, FromMemory(text, 65536));
  text += "no newline at the end";
  EXPECT_EQ(FromFile(text, 65536), FromMemory(text, 65536));
}

TEST_F(FileLineReaderTest, ALineLongerThanTheLimitStopsTheReading) {
  for (const std::string& text :
       {"short\n" + std::string(100, 'x') + "\nafter\n", "short\n" + std::string(100, 'x')}) {
    const std::vector<Read> reads = FromFile(text, 64);
    ASSERT_EQ(reads.size(), 2u);
    EXPECT_EQ(reads[1].status, LineReader::Status::kTooLong);
    EXPECT_EQ(reads[1].line_number, 2u);
    EXPECT_EQ(reads, FromMemory(text, 64));
  }
}

// Longer than the buffer is by default: it grows to hold the longest line
// allowed.
TEST_F(FileLineReaderTest, ALimitAboveTheBufferStillGivesWholeLines) {
  const std::string text = "a\n" + std::string(3 << 20, 'y') + "\nb\n";
  const std::vector<Read> reads = FromFile(text, 4 << 20);
  ASSERT_EQ(reads.size(), 4u);
  EXPECT_EQ(reads[1].line.size(), size_t{3} << 20);
  EXPECT_EQ(reads, FromMemory(text, 4 << 20));
}

TEST_F(FileLineReaderTest, PeekShowsTheStartWithoutTakingIt) {
  const std::string path = dir_.File("input");
  ASSERT_TRUE(test_support::WriteFile(path, "heap_v2/524288\nsecond\n"));
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  FileLineReader reader(fd.get(), 1024);
  EXPECT_EQ(reader.Peek(), "heap_v2/524288\nsecond\n");
  ASSERT_EQ(reader.Next(), LineReader::Status::kLine);
  EXPECT_EQ(reader.line(), "heap_v2/524288");
  EXPECT_EQ(reader.Peek(), "second\n");
  EXPECT_EQ(reader.read_error(), 0);
}

// This process's resident memory (anonymous and file pages), in KiB.
long RssKib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmRSS:")) return std::stol(line.substr(6));
  }
  return -1;
}

// A 64 MiB input costs the buffer, not its size: nothing of the file is
// mapped, and lines are views into the one buffer.
TEST_F(FileLineReaderTest, ABigFileCostsOnlyTheBuffer) {
  const std::string path = dir_.File("big");
  {
    std::ofstream out(path, std::ios::binary);
    const std::string line = std::string(999, 'z') + "\n";
    for (size_t i = 0; i < (size_t{64} << 10); ++i) out << line;
  }
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  FileLineReader reader(fd.get(), 65536);
  const long before = RssKib();
  long peak = 0;
  size_t lines = 0;
  while (reader.Next() == LineReader::Status::kLine) {
    if (reader.line().size() != 999) break;
    if (++lines % 4096 == 0) peak = std::max(peak, RssKib() - before);
  }
  EXPECT_EQ(lines, size_t{64} << 10);
  EXPECT_LT(peak, 8 * 1024) << "KiB more resident while reading";
}

TEST_F(FileLineReaderTest, AnEmptyFileEndsAtOnce) {
  EXPECT_EQ(FromFile("", 64), FromMemory("", 64));
}

// read(2) of a directory fails (EISDIR): a read error, not an empty input.
TEST_F(FileLineReaderTest, AFailedReadIsAReadError) {
  Fd fd(::open(dir_.path().c_str(), O_RDONLY | O_CLOEXEC | O_DIRECTORY));
  ASSERT_TRUE(fd);
  FileLineReader reader(fd.get(), 64);
  EXPECT_EQ(reader.Peek(), "");
  EXPECT_EQ(reader.read_error(), EISDIR);
  EXPECT_EQ(reader.Next(), LineReader::Status::kReadError);
}

}  // namespace
}  // namespace memprof::report::parse
