// agent/logging/: the module's own logger stays out of the host's spdlog.
#include "agent/logging/agent_logger.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

namespace memprof::agent {
namespace {

// Puts the process-wide logger's level back, whatever a test set.
class LoggerLevelGuard {
 public:
  LoggerLevelGuard() : saved_(Logger().level()) {}
  ~LoggerLevelGuard() { Logger().set_level(saved_); }

 private:
  spdlog::level::level_enum saved_;
};

TEST(AgentLoggerTest, IsNamedMemprofAndLeavesSpdlogsDefaultLoggerAlone) {
  spdlog::logger* host_default = spdlog::default_logger_raw();
  spdlog::logger& agent_logger = Logger();
  EXPECT_EQ(agent_logger.name(), "memprof");
  // Never registered, never the default: the host's spdlog setup is untouched.
  EXPECT_EQ(spdlog::get("memprof"), nullptr);
  EXPECT_EQ(spdlog::default_logger_raw(), host_default);
  EXPECT_NE(spdlog::default_logger_raw(), &agent_logger);
  EXPECT_EQ(&Logger(), &agent_logger);
}

TEST(AgentLoggerTest, SetLogLevelLeavesTheHostsDefaultLevelAlone) {
  LoggerLevelGuard guard;
  const spdlog::level::level_enum host_level = spdlog::default_logger_raw()->level();
  SetLogLevel("trace");
  EXPECT_EQ(Logger().level(), spdlog::level::trace);
  EXPECT_EQ(spdlog::default_logger_raw()->level(), host_level);
  EXPECT_EQ(spdlog::get_level(), host_level);
}

TEST(AgentLoggerTest, SetLogLevelTakesSpdlogsNamesAndIgnoresUnknownOrEmptyOnes) {
  LoggerLevelGuard guard;
  SetLogLevel("debug");
  EXPECT_EQ(Logger().level(), spdlog::level::debug);
  SetLogLevel("warning");
  EXPECT_EQ(Logger().level(), spdlog::level::warn);
  // Unknown or empty: the level stays as it was (spdlog would say "off").
  SetLogLevel("loud");
  EXPECT_EQ(Logger().level(), spdlog::level::warn);
  SetLogLevel("");
  EXPECT_EQ(Logger().level(), spdlog::level::warn);
  SetLogLevel("off");
  EXPECT_EQ(Logger().level(), spdlog::level::off);
}

}  // namespace
}  // namespace memprof::agent
