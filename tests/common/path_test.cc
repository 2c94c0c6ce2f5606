#include "common/path.h"

#include <gtest/gtest.h>

namespace memprof {
namespace {

TEST(PathTest, BasenameIsTheLastComponent) {
  EXPECT_EQ(PathBasename("/usr/lib/libc.so.6"), "libc.so.6");
  EXPECT_EQ(PathBasename("libc.so.6"), "libc.so.6");
  EXPECT_EQ(PathBasename("dir/"), "");
  EXPECT_EQ(PathBasename(""), "");
}

TEST(PathTest, BasenameOfACStringEndsWhereThePathEnds) {
  const char* path = "/lib/ld-linux.so.2";
  EXPECT_STREQ(PathBasename(path).data(), "ld-linux.so.2");
}

TEST(PathTest, DirnameIsEverythingBeforeTheLastSlash) {
  EXPECT_EQ(PathDirname("profile.heap"), ".");
  EXPECT_EQ(PathDirname("/profile.heap"), "/");
  EXPECT_EQ(PathDirname("a/b/c"), "a/b");
  EXPECT_EQ(PathDirname("/tmp/memprof/1.sock"), "/tmp/memprof");
}

}  // namespace
}  // namespace memprof
