#include "common/socket_path.h"

#include <stdlib.h>

#include <gtest/gtest.h>

namespace memprof {
namespace {

struct stat Dir(mode_t perms, uid_t owner) {
  struct stat st{};
  st.st_mode = S_IFDIR | perms;
  st.st_uid = owner;
  return st;
}

TEST(SocketPathTest, PathForPid) {
  EXPECT_EQ(SocketPathForPid("/tmp/memprof", 1234).value(), "/tmp/memprof/1234.sock");
}

TEST(SocketPathTest, RejectsRelativeDirectory) {
  auto r = SocketPathForPid("memprof", 1);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
}

TEST(SocketPathTest, RejectsPathsThatDoNotFitSunPath) {
  std::string dir = "/" + std::string(100, 'd');
  auto r = SocketPathForPid(dir, 4194304);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("MEMPROF_SOCKET_DIR"), std::string::npos) << r.error().message;
  EXPECT_TRUE(SocketPathForPid("/" + std::string(80, 'd'), 4194304));
}

TEST(SocketPathTest, PidFromSocketName) {
  EXPECT_EQ(PidFromSocketName("1234.sock"), 1234);
  for (const char* bad : {"1234.sock.tmp", "01234.sock", ".sock", "abc.sock", "12a.sock", "-1.sock",
                          "1234", "99999999999999999999.sock", "0.sock"}) {
    EXPECT_FALSE(PidFromSocketName(bad)) << bad;
  }
}

TEST(SocketPathTest, DirectoryFromEnvironmentWithDefault) {
  ::unsetenv(kSocketDirEnv);
  EXPECT_EQ(SocketDirectory(), kDefaultSocketDir);
  ::setenv(kSocketDirEnv, "/run/memprof//", 1);
  EXPECT_EQ(SocketDirectory(), "/run/memprof");
  ::unsetenv(kSocketDirEnv);
}

TEST(SocketDirectoryCheckTest, AcceptsPrivateAndStickySharedDirectories) {
  EXPECT_TRUE(CheckSocketDirectory(Dir(0700, 1000), 1000, "/d"));
  EXPECT_TRUE(CheckSocketDirectory(Dir(01777, 0), 1000, "/tmp/memprof"));
  EXPECT_TRUE(CheckSocketDirectory(Dir(0755, 0), 1000, "/run/memprof"));
}

TEST(SocketDirectoryCheckTest, RefusesSymlinks) {
  struct stat st{};
  st.st_mode = S_IFLNK | 0777;
  auto r = CheckSocketDirectory(st, 0, "/tmp/memprof");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(r.error().message.find("symbolic link"), std::string::npos);
}

TEST(SocketDirectoryCheckTest, RefusesForeignOwner) {
  auto r = CheckSocketDirectory(Dir(0700, 1001), 1000, "/d");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("owned by uid 1001"), std::string::npos);
}

TEST(SocketDirectoryCheckTest, RefusesSharedWritableWithoutStickyBit) {
  auto r = CheckSocketDirectory(Dir(0777, 0), 1000, "/d");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("sticky"), std::string::npos);
  EXPECT_FALSE(CheckSocketDirectory(Dir(0770, 1000), 1000, "/d"));
}

TEST(SocketDirectoryCheckTest, RefusesNonDirectory) {
  struct stat st{};
  st.st_mode = S_IFREG | 0600;
  auto r = CheckSocketDirectory(st, 0, "/d");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not a directory"), std::string::npos);
}

}  // namespace
}  // namespace memprof
