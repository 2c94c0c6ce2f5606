#include "cli/launch/command_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/cli/testing/cli_test_util.h"

namespace memprof::cli {
namespace {

class CommandPathTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  std::string a_ = dir_.File("a");
  std::string b_ = dir_.File("b");

  void SetUp() override {
    testing::MakeDirs(a_);
    testing::MakeDirs(b_);
  }
  void MakeFile(const std::string& path, mode_t mode) {
    testing::WriteFile(path, "#!/bin/sh\n");
    ::chmod(path.c_str(), mode);
  }
};

TEST_F(CommandPathTest, SearchesPathInOrder) {
  MakeFile(a_ + "/tool", 0755);
  MakeFile(b_ + "/tool", 0755);
  auto path = ResolveCommandPath("tool", b_ + ":" + a_);
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_EQ(*path, b_ + "/tool");
}

TEST_F(CommandPathTest, SkipsDirectoriesAndNonExecutables) {
  testing::MakeDirs(a_ + "/tool");
  MakeFile(b_ + "/tool", 0755);
  auto path = ResolveCommandPath("tool", a_ + ":" + b_);
  ASSERT_TRUE(path);
  EXPECT_EQ(*path, b_ + "/tool");
}

TEST_F(CommandPathTest, NotFoundIsAUsageErrorNamingTheCommand) {
  auto path = ResolveCommandPath("no-such-tool", a_ + ":" + b_);
  ASSERT_FALSE(path);
  EXPECT_EQ(path.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(path.error().message, "command not found: no-such-tool");
}

TEST_F(CommandPathTest, NamesWithASlashAreNotSearched) {
  MakeFile(a_ + "/tool", 0755);
  EXPECT_EQ(*ResolveCommandPath(a_ + "/tool", "/nowhere"), a_ + "/tool");
  EXPECT_FALSE(ResolveCommandPath("./definitely-not-here", a_));
}

TEST_F(CommandPathTest, NoPathUsesTheDefaultSearchPath) {
  auto path = ResolveCommandPath("sh", std::nullopt);
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_EQ(*path, "/bin/sh");
}

TEST_F(CommandPathTest, OnlyNonExecutableMatchesArePermissionDenied) {
  // Even root needs one x bit for access(X_OK).
  MakeFile(a_ + "/tool", 0644);
  auto path = ResolveCommandPath("tool", a_);
  ASSERT_FALSE(path);
  EXPECT_EQ(path.error().code, ErrorCode::kPermissionDenied);
}

}  // namespace
}  // namespace memprof::cli
