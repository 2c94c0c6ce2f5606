#include "agent/shared/agent_thread.h"

#include <jemalloc/jemalloc.h>
#include <sys/prctl.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace memprof::agent {
namespace {

// This test program runs with prof:true (jemalloc_prof_on_conf.cc), so every
// thread starts with thread.prof.active=true.
bool ThreadSampled() {
  bool active = false;
  size_t size = sizeof(active);
  EXPECT_EQ(mallctl("thread.prof.active", &active, &size, nullptr, 0), 0);
  return active;
}

std::string ThreadName() {
  char name[16] = {};
  prctl(PR_GET_NAME, name);
  return name;
}

TEST(AgentThreadTest, AnAgentThreadIsNamedAndNotSampled) {
  bool sampled_before = false, sampled_after = true;
  std::string name;
  std::thread([&] {
    sampled_before = ThreadSampled();
    BecomeAgentThread("testing");
    sampled_after = ThreadSampled();
    name = ThreadName();
  }).join();
  EXPECT_TRUE(sampled_before);
  EXPECT_FALSE(sampled_after);
  EXPECT_EQ(name, "memprof-testing");
}

TEST(AgentThreadTest, ALongRoleIsCutToTheKernelsFifteenCharacters) {
  std::string name;
  std::thread([&] {
    BecomeAgentThread("a-very-long-role-name");
    name = ThreadName();
  }).join();
  EXPECT_EQ(name, "memprof-a-very-");
}

TEST(AgentThreadTest, AgentCodeOnAHostThreadIsNotSampledAndTheHostsSettingComesBack) {
  bool inside = true, after = false;
  std::thread([&] {
    {
      const NotSampledHere quiet;
      inside = ThreadSampled();
    }
    after = ThreadSampled();
  }).join();
  EXPECT_FALSE(inside);
  EXPECT_TRUE(after);
}

}  // namespace
}  // namespace memprof::agent
