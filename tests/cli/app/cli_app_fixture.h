#ifndef MEMPROF_TESTS_CLI_APP_CLI_APP_FIXTURE_H_
#define MEMPROF_TESTS_CLI_APP_CLI_APP_FIXTURE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app/cli_app.h"
#include "cli/io/logging.h"
#include "tests/cli/app/forwarding_client.h"
#include "tests/cli/testing/cli_test_util.h"

namespace memprof::cli {

// The help's words with every run of white space made one space: what a
// reader reads, wherever the help wrapped a description.
inline std::string Flat(const std::string& help) {
  std::string flat;
  for (const char c : help) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (!space) flat += c;
    if (space && !flat.empty() && flat.back() != ' ') flat += ' ';
  }
  return flat;
}

// Runs the real CLI11 app through RunCli with fake seams (tests/cli/app/).
class CliAppTest : public ::testing::Test {
 protected:
  testing::TempDir tmp_;
  std::string proc_ = tmp_.File("proc");
  std::string sockets_ = tmp_.File("s");
  testing::FakeProfileClient fake_;
  std::ostringstream out_;
  std::ostringstream err_;
  int clients_made_ = 0;
  std::chrono::milliseconds timeout_{0};
  std::optional<ExecPlan> executed_;
  std::map<std::string, std::string> variables_;  // CliEnvironment::variables

  void SetUp() override {
    testing::MakeDirs(proc_);
    testing::MakeDirs(sockets_);
    ::unsetenv("MEMPROF_PID");
  }
  void TearDown() override {
    ::unsetenv("MEMPROF_PID");
    ConfigureLogging(std::cerr, 0);
  }

  void AddAgent(pid_t pid, const std::string& name) {
    testing::MakeProcEntry(proc_, pid, name, {}, 1000, {name});
    testing::MakeSocketFile(sockets_ + "/" + std::to_string(pid) + ".sock");
  }

  int Run(const std::vector<std::string>& args) {
    CliEnvironment env;
    env.out = &out_;
    env.err = &err_;
    env.proc_root = proc_;
    env.socket_dir = sockets_;
    env.watch_signals = false;
    env.variables = variables_;
    env.make_client = [this](std::chrono::milliseconds timeout, std::stop_token) {
      ++clients_made_;
      timeout_ = timeout;
      return std::make_unique<testing::ForwardingClient>(fake_);
    };
    env.run_environment = [this] { return RunEnv(); };
    env.exec = [this](const ExecPlan& plan) -> Result<void> {
      executed_ = plan;
      return {};
    };
    return RunCli(args, env);
  }

  RunEnvironment RunEnv() {
    testing::WriteFile(tmp_.File("agent.so"), "");
    RunEnvironment env;
    env.variables = {"PATH=/usr/bin:/bin", "MEMPROF_AGENT_LIB=" + tmp_.File("agent.so")};
    env.jemalloc_path = MEMPROF_TEST_JEMALLOC_LIB;
    return env;
  }

  // The error output must be exactly one "memprofctl: error: " line.
  void ExpectOneErrorLine(const std::string& fragment) {
    const std::string err = err_.str();
    EXPECT_EQ(err.rfind("memprofctl: error: ", 0), 0u) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_NE(err.find(fragment), std::string::npos) << err;
    EXPECT_TRUE(out_.str().empty()) << out_.str();
  }
};

}  // namespace memprof::cli

#endif  // MEMPROF_TESTS_CLI_APP_CLI_APP_FIXTURE_H_
