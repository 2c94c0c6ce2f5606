#include "agent/sampler/live_table.h"

#include <gtest/gtest.h>

#include <set>

namespace memprof::agent {
namespace {

TEST(LiveTableTest, InsertTakeErase) {
  LiveTable t;
  ASSERT_TRUE(t.Init(1024));
  EXPECT_TRUE(t.Insert(0x10000, 100, 3));
  EXPECT_TRUE(t.Insert(0x20000, 200, 4));
  EXPECT_EQ(t.live(), 2u);
  EXPECT_TRUE(t.Contains(0x10000));
  uint64_t size = 0;
  uint32_t stack = 0;
  ASSERT_TRUE(t.Take(0x20000, &size, &stack));
  EXPECT_EQ(size, 200u);
  EXPECT_EQ(stack, 4u);
  EXPECT_FALSE(t.Take(0x20000, &size, &stack));  // once only
  t.Erase(0x10000);
  EXPECT_FALSE(t.Contains(0x10000));
  t.Erase(0x30000);  // never inserted: nothing happens
  EXPECT_EQ(t.live(), 0u);
}

TEST(LiveTableTest, ForEachSeesEveryLiveEntry) {
  LiveTable t;
  ASSERT_TRUE(t.Init(4096));
  std::set<uintptr_t> expected;
  for (uintptr_t p = 0x100000; p < 0x100000 + 1000 * 16; p += 16) {
    ASSERT_TRUE(t.Insert(p, p & 0xFFF, 1));
    expected.insert(p);
  }
  for (uintptr_t p = 0x100000; p < 0x100000 + 500 * 16; p += 16) {
    t.Erase(p);
    expected.erase(p);
  }
  std::set<uintptr_t> seen;
  t.ForEach([&](uintptr_t p, uint64_t size, uint32_t stack) {
    EXPECT_EQ(size, p & 0xFFF);
    EXPECT_EQ(stack, 1u);
    seen.insert(p);
  });
  EXPECT_EQ(seen, expected);
}

TEST(LiveTableTest, FullTableCountsOverflowsAndKeepsWorking) {
  LiveTable t;
  ASSERT_TRUE(t.Init(64));
  uint64_t inserted = 0;
  for (uintptr_t p = 0x100000; p < 0x100000 + 1000 * 16; p += 16) {
    inserted += t.Insert(p, 1, 0) ? 1 : 0;
  }
  EXPECT_LE(inserted, t.capacity());
  EXPECT_EQ(t.overflows(), 1000 - inserted);
  EXPECT_GT(t.overflows(), 0u);
  // Freed slots are reused (tombstones).
  t.ForEach([&](uintptr_t p, uint64_t, uint32_t) { t.Erase(p); });
  EXPECT_EQ(t.live(), 0u);
  EXPECT_TRUE(t.Insert(0x900000, 5, 0));
  t.Clear();
  EXPECT_FALSE(t.Contains(0x900000));
  EXPECT_EQ(t.overflows(), 0u);
}

TEST(LiveTableTest, UninitializedTableIgnoresEverything) {
  LiveTable t;
  t.Erase(0x10000);
  EXPECT_FALSE(t.Insert(0x10000, 1, 0));
  EXPECT_FALSE(t.Contains(0x10000));
}

}  // namespace
}  // namespace memprof::agent
