#include "common/chunk_writer.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace memprof {
namespace {

// Many chunks, more than can wait at once: all arrive, in order, and the
// buffers handed back come back empty.
TEST(ChunkWriterTest, WritesEveryChunkInOrder) {
  std::ostringstream out;
  std::string expected;
  {
    ChunkWriter writer(out);
    std::string chunk;
    for (int i = 0; i < 1000; ++i) {
      chunk += "chunk " + std::to_string(i) + ";";
      expected += chunk;
      chunk = writer.Write(std::move(chunk));
      ASSERT_TRUE(chunk.empty());
    }
    writer.Finish();
    EXPECT_EQ(out.str(), expected);
  }
  EXPECT_EQ(out.str(), expected);  // the destructor writes nothing twice
}

// Destroyed without Finish, it still writes what it was given.
TEST(ChunkWriterTest, DestructorFinishes) {
  std::ostringstream out;
  {
    ChunkWriter writer(out);
    writer.Write("a");
    writer.Write("b");
  }
  EXPECT_EQ(out.str(), "ab");
}

}  // namespace
}  // namespace memprof
