#include "common/cgroup_memory.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/support/temp_dir.h"

namespace memprof {
namespace {

using test_support::TempDir;
using test_support::WriteFile;

// What this kind of machine shows: cgroup v1 with the memory controller,
// and a v2 hierarchy without it (systemd's "hybrid" layout).
constexpr char kHybridCgroup[] =
    "9:name=systemd:/\n"
    "4:memory:/process_api/2ae3\n"
    "3:cpu,cpuacct:/\n"
    "0::/\n";

TEST(CgroupMembershipTest, ParsesVersionOneAndTwoLines) {
  const auto m = ParseCgroupMemberships(kHybridCgroup);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[1].hierarchy, 4);
  EXPECT_EQ(m[1].controllers, (std::vector<std::string>{"memory"}));
  EXPECT_EQ(m[1].path, "/process_api/2ae3");
  EXPECT_EQ(m[2].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
  EXPECT_EQ(m[3].hierarchy, 0);
  EXPECT_TRUE(m[3].controllers.empty());
  EXPECT_EQ(m[3].path, "/");
}

TEST(CgroupMountTest, FindsCgroupFileSystemsWithTheirRootAndEscapedMountPoint) {
  const auto mounts = ParseCgroupMounts(
      "24 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
      "41 31 0:38 /kubepods/pod1 /sys/fs/my\\040cgroup rw shared:9 - cgroup2 cgroup2 rw\n");
  ASSERT_EQ(mounts.size(), 2u);
  EXPECT_EQ(mounts[0].version, 1);
  EXPECT_EQ(mounts[0].controllers, (std::vector<std::string>{"rw", "memory"}));
  EXPECT_EQ(mounts[1].version, 2);
  EXPECT_EQ(mounts[1].root, "/kubepods/pod1");
  EXPECT_EQ(mounts[1].mount_point, "/sys/fs/my cgroup");
}

TEST(CgroupDirectoryTest, MapsCgroupPathsUnderTheMountedSubtree) {
  const CgroupMount whole{.version = 2, .controllers = {}, .root = "/", .mount_point = "/sys/fs/cgroup"};
  EXPECT_EQ(CgroupDirectory(whole, "/"), "/sys/fs/cgroup");
  EXPECT_EQ(CgroupDirectory(whole, "/a/b"), "/sys/fs/cgroup/a/b");
  const CgroupMount sub{.version = 2, .controllers = {}, .root = "/pod", .mount_point = "/sys/fs/cgroup"};
  EXPECT_EQ(CgroupDirectory(sub, "/pod"), "/sys/fs/cgroup");
  EXPECT_EQ(CgroupDirectory(sub, "/pod/app"), "/sys/fs/cgroup/app");
  // Not "/podcast": a prefix must end at a '/'.
  EXPECT_EQ(CgroupDirectory(sub, "/podcast"), "/sys/fs/cgroup");
}

TEST(CgroupLimitValueTest, TellsLimitsFromNoLimit) {
  EXPECT_EQ(ParseLimitValue("104857600\n"), 104857600u);
  EXPECT_EQ(ParseLimitValue("max\n"), std::nullopt);
  EXPECT_EQ(ParseLimitValue("9223372036854771712\n"), std::nullopt);  // v1's page-counter max
  EXPECT_EQ(ParseLimitValue(""), std::nullopt);
  EXPECT_EQ(ParseLimitValue("12abc"), std::nullopt);
}

// A fake root: /proc/self/{cgroup,mountinfo} and the cgroup files.
class CgroupTreeTest : public ::testing::Test {
 protected:
  void Write(const std::string& path, const std::string& text) {
    const std::string full = root_.path() + path;
    std::filesystem::create_directories(std::filesystem::path(full).parent_path());
    ASSERT_TRUE(WriteFile(full, text)) << full;
  }
  void Level(const std::string& dir, const std::string& file, const std::string& limit,
             const std::string& usage_file, const std::string& usage) {
    Write(dir + "/" + file, limit + "\n");
    Write(dir + "/" + usage_file, usage + "\n");
  }
  Result<std::optional<CgroupMemoryLimit>> Read() {
    return ReadCgroupMemoryLimit(root_.path(), "self");
  }

  TempDir root_{"memprof-cgroup"};
};

TEST_F(CgroupTreeTest, VersionTwoTakesTheLevelWithTheLeastRoomLeft) {
  Write("/proc/self/cgroup", "0::/system.slice/app.service\n");
  Write("/proc/self/mountinfo", "41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  Write("/sys/fs/cgroup/cgroup.controllers", "cpu io memory pids\n");
  // The service: 1 GiB, 100 MiB used (924 MiB left). Its slice: 600 MiB,
  // 500 MiB used (100 MiB left): the slice's limit is the one that binds.
  Level("/sys/fs/cgroup/system.slice/app.service", "memory.max", "1073741824", "memory.current",
        "104857600");
  Write("/sys/fs/cgroup/system.slice/app.service/memory.high", "max\n");
  Level("/sys/fs/cgroup/system.slice", "memory.max", "629145600", "memory.current", "524288000");
  auto limit = Read();
  ASSERT_TRUE(limit) << limit.error().message;
  ASSERT_TRUE(limit->has_value());
  EXPECT_EQ((*limit)->version, 2);
  EXPECT_EQ((*limit)->cgroup, "/system.slice");
  EXPECT_EQ((*limit)->source, "memory.max");
  EXPECT_EQ((*limit)->limit_bytes, 629145600u);
  EXPECT_EQ((*limit)->usage_bytes, 524288000u);
  EXPECT_EQ((*limit)->directory, root_.path() + "/sys/fs/cgroup/system.slice");
}

TEST_F(CgroupTreeTest, VersionTwoMemoryHighBelowMaxIsTheLimit) {
  Write("/proc/self/cgroup", "0::/app\n");
  Write("/proc/self/mountinfo", "41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  Write("/sys/fs/cgroup/cgroup.controllers", "memory\n");
  Level("/sys/fs/cgroup/app", "memory.max", "200000000", "memory.current", "1000");
  Write("/sys/fs/cgroup/app/memory.high", "150000000\n");
  auto limit = Read();
  ASSERT_TRUE(limit && limit->has_value());
  EXPECT_EQ((*limit)->source, "memory.high");
  EXPECT_EQ((*limit)->limit_bytes, 150000000u);
}

TEST_F(CgroupTreeTest, HybridLayoutUsesVersionOnesMemoryHierarchy) {
  Write("/proc/self/cgroup", kHybridCgroup);
  Write("/proc/self/mountinfo",
        "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
  Write("/sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n");
  Level("/sys/fs/cgroup/memory/process_api/2ae3", "memory.limit_in_bytes", "67108864",
        "memory.usage_in_bytes", "33554432");
  Level("/sys/fs/cgroup/memory/process_api", "memory.limit_in_bytes", "9223372036854771712",
        "memory.usage_in_bytes", "40000000");
  auto limit = Read();
  ASSERT_TRUE(limit) << limit.error().message;
  ASSERT_TRUE(limit->has_value());
  EXPECT_EQ((*limit)->version, 1);
  EXPECT_EQ((*limit)->cgroup, "/process_api/2ae3");
  EXPECT_EQ((*limit)->source, "memory.limit_in_bytes");
  EXPECT_EQ((*limit)->limit_bytes, 67108864u);
  EXPECT_EQ((*limit)->usage_bytes, 33554432u);
}

TEST_F(CgroupTreeTest, NoLimitAnywhereIsNone) {
  Write("/proc/self/cgroup", "0::/app\n");
  Write("/proc/self/mountinfo", "41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  Write("/sys/fs/cgroup/cgroup.controllers", "memory\n");
  Level("/sys/fs/cgroup/app", "memory.max", "max", "memory.current", "1000");
  auto limit = Read();
  ASSERT_TRUE(limit) << limit.error().message;
  EXPECT_FALSE(limit->has_value());
}

TEST_F(CgroupTreeTest, NoMemoryControllerIsNone) {
  Write("/proc/self/cgroup", "0::/app\n");
  Write("/proc/self/mountinfo", "41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  Write("/sys/fs/cgroup/cgroup.controllers", "cpu\n");
  auto limit = Read();
  ASSERT_TRUE(limit) << limit.error().message;
  EXPECT_FALSE(limit->has_value());
}

TEST_F(CgroupTreeTest, UnreadableProcIsAnError) {
  auto limit = Read();
  ASSERT_FALSE(limit);
  EXPECT_EQ(limit.error().code, ErrorCode::kNotFound);
}

TEST_F(CgroupTreeTest, RefreshReadsTheLevelAgainAndSaysWhenItIsGone) {
  Write("/proc/self/cgroup", "0::/app\n");
  Write("/proc/self/mountinfo", "41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  Write("/sys/fs/cgroup/cgroup.controllers", "memory\n");
  Level("/sys/fs/cgroup/app", "memory.max", "1000000", "memory.current", "1000");
  auto limit = Read();
  ASSERT_TRUE(limit && limit->has_value());
  CgroupMemoryLimit level = **limit;
  Level("/sys/fs/cgroup/app", "memory.max", "2000000", "memory.current", "950000");
  ASSERT_TRUE(RefreshCgroupMemoryLimit(level));
  EXPECT_EQ(level.limit_bytes, 2000000u);
  EXPECT_EQ(level.usage_bytes, 950000u);
  Level("/sys/fs/cgroup/app", "memory.max", "3000000", "memory.current", "960000");
  ASSERT_TRUE(RefreshCgroupMemoryUsage(level));
  EXPECT_EQ(level.limit_bytes, 2000000u) << "the usage alone was read again";
  EXPECT_EQ(level.usage_bytes, 960000u);
  std::filesystem::remove_all(root_.path() + "/sys/fs/cgroup/app");
  auto gone = RefreshCgroupMemoryLimit(level);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
}

// The machine's own: whatever it is, it is read without error.
TEST(CgroupLiveTest, ReadsThisProcesssLimitOrNone) {
  auto limit = ReadCgroupMemoryLimit();
  ASSERT_TRUE(limit) << limit.error().message;
  if (limit->has_value()) {
    EXPECT_GT((*limit)->limit_bytes, 0u);
    EXPECT_TRUE((*limit)->version == 1 || (*limit)->version == 2);
  }
}

}  // namespace
}  // namespace memprof
