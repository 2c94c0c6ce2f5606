#include "tests/cli/report/symbolize/test_support.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/support/command_runner.h"
#include "tests/support/wait_until.h"

namespace memprof::report::symbolize::testing {

namespace {

std::optional<std::string> EnvValue(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

}  // namespace

ScopedCacheEnvironment::ScopedCacheEnvironment()
    : xdg_(EnvValue("XDG_CACHE_HOME")), home_(EnvValue("HOME")) {}

ScopedCacheEnvironment::~ScopedCacheEnvironment() {
  Set("XDG_CACHE_HOME", xdg_ ? xdg_->c_str() : nullptr);
  Set("HOME", home_ ? home_->c_str() : nullptr);
}

void ScopedCacheEnvironment::Set(const char* name, const char* value) {
  if (value != nullptr) {
    ::setenv(name, value, 1);
  } else {
    ::unsetenv(name);
  }
}

FixtureProcess::FixtureProcess(const std::string& executable, std::chrono::milliseconds deadline) {
  test_support::SpawnOptions options;
  options.argv = {executable};
  options.stdin_pipe = true;  // it exits at EOF
  auto process = test_support::Subprocess::Spawn(options);
  if (!process) {
    error_ = "cannot start " + executable + ": " + process.error().message;
    return;
  }
  process_ = std::move(*process);
  AwaitReady(deadline);
}

FixtureProcess::~FixtureProcess() {
  if (!process_) return;
  process_->CloseStdin();                   // EOF: the fixture exits
  process_->Wait(std::chrono::seconds(5));  // and if not, ~Subprocess kills it
}

void FixtureProcess::AwaitReady(std::chrono::milliseconds deadline) {
  const auto has_ready_line = [this] {
    const std::string out = process_->StdoutText();
    return out.starts_with("ready\n") || out.find("\nready\n") != std::string::npos;
  };
  bool exited = false;
  test_support::WaitUntil(
      [&] {
        if (has_ready_line()) return true;
        exited = process_->HasExited();
        return exited;
      },
      deadline);
  std::istringstream out(process_->StdoutText());
  for (std::string line; !ready_ && std::getline(out, line);) HandleLine(line);
  if (ready_) return;
  error_ = exited ? "fixture exited before it was ready" : "fixture not ready before the deadline";
  error_ += "\n--- stderr ---\n" + process_->StderrText();
}

void FixtureProcess::HandleLine(const std::string& line) {
  if (line == "ready") {
    ready_ = true;
  } else if (line.starts_with("map ")) {
    maps_.push_back(line.substr(4));
  } else if (const size_t space = line.find(' '); space != std::string::npos) {
    addresses_[line.substr(0, space)] = std::stoull(line.substr(space + 1), nullptr, 16);
  }
}

uint64_t FixtureProcess::Address(const std::string& name) const {
  auto it = addresses_.find(name);
  return it == addresses_.end() ? 0 : it->second;
}

int MarkerLine(const std::string& source, const std::string& marker) {
  std::ifstream in(source);
  const std::string needle = "// LINE:" + marker;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.ends_with(needle)) return number;
  }
  return 0;
}

bool Objcopy(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {MEMPROF_OBJCOPY};
  argv.insert(argv.end(), args.begin(), args.end());
  return test_support::RunCommand(argv, {}).exit_code == 0;
}

}  // namespace memprof::report::symbolize::testing
