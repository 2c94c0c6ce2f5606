#include "agent/sampler/stack_table.h"

#include <gtest/gtest.h>

namespace memprof::agent {
namespace {

TEST(StackTableTest, SameStackSameId) {
  StackTable t;
  ASSERT_TRUE(t.Init(64));
  const uintptr_t a[] = {0x1000, 0x2000, 0x3000};
  const uintptr_t b[] = {0x1000, 0x2000, 0x3001};
  const uint32_t ia = t.Intern(a, 3);
  const uint32_t ib = t.Intern(b, 3);
  ASSERT_NE(ia, StackTable::kNoStack);
  ASSERT_NE(ib, StackTable::kNoStack);
  EXPECT_NE(ia, ib);
  EXPECT_EQ(t.Intern(a, 3), ia);
  EXPECT_NE(t.Intern(a, 2), ia);  // a prefix is another stack
  EXPECT_EQ(t.size(), 3u);
  const StackTable::Stack* s = t.Find(ia);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->depth, 3u);
  EXPECT_EQ(s->frames[2], 0x3000u);
}

TEST(StackTableTest, FullTableCounts) {
  StackTable t;
  ASSERT_TRUE(t.Init(64));
  int refused = 0;
  for (uintptr_t i = 1; i <= 100; ++i) {
    const uintptr_t frames[] = {i * 16};
    refused += t.Intern(frames, 1) == StackTable::kNoStack ? 1 : 0;
  }
  EXPECT_EQ(t.size(), 48u);  // three quarters of 64
  EXPECT_EQ(refused, 52);
  EXPECT_EQ(t.overflows(), 52u);
  const uintptr_t known[] = {16};
  EXPECT_NE(t.Intern(known, 1), StackTable::kNoStack);  // known stacks still found
  t.Clear();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.Find(0), nullptr);
}

TEST(StackTableTest, DeepStacksAreCut) {
  StackTable t;
  ASSERT_TRUE(t.Init(64));
  uintptr_t frames[100];
  for (int i = 0; i < 100; ++i) frames[i] = 0x1000 + i;
  const uint32_t id = t.Intern(frames, 100);
  ASSERT_NE(id, StackTable::kNoStack);
  EXPECT_EQ(t.Find(id)->depth, static_cast<uint32_t>(StackTable::kMaxFrames));
}

}  // namespace
}  // namespace memprof::agent
