#include "agent/agent_config.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace memprof::agent {
namespace {

AgentConfig FromMap(const std::map<std::string, std::string>& env) {
  return ConfigFromEnvironment([&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(AgentConfigTest, Defaults) {
  AgentConfig c = FromMap({});
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.socket_dir, "/tmp/memprof");
  EXPECT_EQ(c.idle_timeout, std::chrono::seconds(30));
  EXPECT_TRUE(c.warnings.empty());
}

TEST(AgentConfigTest, OffSwitchAcceptsCommonSpellings) {
  for (const char* off : {"off", "OFF", "0", "false", "no"}) {
    EXPECT_FALSE(FromMap({{"MEMPROF_AGENT", off}}).enabled) << off;
  }
  for (const char* on : {"on", "1", "", "yes"}) {
    EXPECT_TRUE(FromMap({{"MEMPROF_AGENT", on}}).enabled) << on;
  }
}

TEST(AgentConfigTest, ReadsDirectoryLogLevelAndMallocConf) {
  AgentConfig c = FromMap({{"MEMPROF_SOCKET_DIR", "/run/mp/"},
                           {"MEMPROF_LOG_LEVEL", "debug"},
                           {"MALLOC_CONF", "prof:true"}});
  EXPECT_EQ(c.socket_dir, "/run/mp");
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.malloc_conf, "prof:true");
}

TEST(AgentConfigTest, IdleTimeoutNeedsAUnitAndBounds) {
  EXPECT_EQ(FromMap({{"MEMPROF_IDLE_TIMEOUT", "2s"}}).idle_timeout, std::chrono::seconds(2));
  for (const char* bad : {"2", "10ms", "48h", "soon"}) {
    AgentConfig c = FromMap({{"MEMPROF_IDLE_TIMEOUT", bad}});
    EXPECT_EQ(c.idle_timeout, std::chrono::seconds(30)) << bad;
    ASSERT_EQ(c.warnings.size(), 1u) << bad;
    EXPECT_NE(c.warnings[0].find("MEMPROF_IDLE_TIMEOUT"), std::string::npos);
  }
}

}  // namespace
}  // namespace memprof::agent
