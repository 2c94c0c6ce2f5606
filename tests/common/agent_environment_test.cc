#include "common/agent_environment.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "common/socket_path.h"

namespace memprof {
namespace {

TEST(AgentEnvironmentTest, AgentIsSwitchedOffByFourWordsInAnyCase) {
  for (const char* off : {"off", "OFF", "0", "false", "False", "no", "No"}) {
    EXPECT_TRUE(AgentSwitchedOff(off)) << off;
  }
  for (const char* on : {"", "on", "1", "true", "yes", "offf"}) {
    EXPECT_FALSE(AgentSwitchedOff(on)) << on;
  }
}

TEST(AgentEnvironmentTest, ChildrenInheritOnlyWhenAskedTo) {
  EXPECT_TRUE(ChildrenInherit("inherit"));
  EXPECT_TRUE(ChildrenInherit("Inherit"));
  EXPECT_FALSE(ChildrenInherit(""));
  EXPECT_FALSE(ChildrenInherit("none"));
  EXPECT_TRUE(ForkSwitchedOff("off"));
  EXPECT_TRUE(ForkSwitchedOff("OFF"));
  EXPECT_FALSE(ForkSwitchedOff("follow"));
  EXPECT_FALSE(ForkSwitchedOff(""));
}

TEST(AgentEnvironmentTest, ExecdByAnotherHostWhenTheHostPidIsAnotherProcess) {
  const pid_t self = ::getpid();
  EXPECT_FALSE(ExecdByAnotherHost(nullptr, self));
  EXPECT_FALSE(ExecdByAnotherHost(std::to_string(self).c_str(), self));
  EXPECT_TRUE(ExecdByAnotherHost(std::to_string(self + 1).c_str(), self));
}

TEST(AgentEnvironmentTest, SocketDirectoryDefaultsAndLosesTrailingSlashes) {
  EXPECT_EQ(SocketDirectoryFrom(""), kDefaultSocketDir);
  EXPECT_EQ(SocketDirectoryFrom("/run/memprof/"), "/run/memprof");
  EXPECT_EQ(SocketDirectoryFrom("/run/memprof//"), "/run/memprof");
  EXPECT_EQ(SocketDirectoryFrom("/"), "/");
}

}  // namespace
}  // namespace memprof
