#ifndef MEMPROF_TESTS_CLI_REPORT_SYMBOLIZE_TEST_SUPPORT_H_
#define MEMPROF_TESTS_CLI_REPORT_SYMBOLIZE_TEST_SUPPORT_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"

namespace memprof::report::symbolize::testing {

// Sets XDG_CACHE_HOME and HOME as a test of the caches' default places
// needs them, and gives them back their values (or their absence) when it
// goes, also when the test failed.
class ScopedCacheEnvironment {
 public:
  ScopedCacheEnvironment();
  ~ScopedCacheEnvironment();
  ScopedCacheEnvironment(const ScopedCacheEnvironment&) = delete;
  ScopedCacheEnvironment& operator=(const ScopedCacheEnvironment&) = delete;
  // Sets `name` to `value`, or unsets it for nullptr.
  static void Set(const char* name, const char* value);

 private:
  std::optional<std::string> xdg_;
  std::optional<std::string> home_;
};

// A running symbolize_fixture (or a copy of it), a Subprocess of
// tests/support. The constructor waits (with a deadline) until it has
// printed its addresses and maps; the destructor closes its stdin, which
// makes it exit, and reaps it (killed after a deadline), also when a test
// failed.
class FixtureProcess {
 public:
  explicit FixtureProcess(const std::string& executable,
                          std::chrono::milliseconds deadline = std::chrono::seconds(20));
  ~FixtureProcess();
  FixtureProcess(const FixtureProcess&) = delete;
  FixtureProcess& operator=(const FixtureProcess&) = delete;

  bool ready() const { return ready_; }
  const std::string& error() const { return error_; }
  pid_t pid() const { return process_ ? process_->pid() : -1; }
  // A named address it printed ("inline_ra", "lib_ra", ...); 0 if absent.
  uint64_t Address(const std::string& name) const;
  const std::vector<std::string>& maps() const { return maps_; }

 private:
  void AwaitReady(std::chrono::milliseconds deadline);
  void HandleLine(const std::string& line);

  std::unique_ptr<test_support::Subprocess> process_;
  bool ready_ = false;
  std::string error_;
  std::map<std::string, uint64_t> addresses_;
  std::vector<std::string> maps_;
};

// Line number of the "// LINE:<marker>" comment in `source`, 0 if absent.
int MarkerLine(const std::string& source, const std::string& marker);

// The fixture program's source, where its LINE markers are.
inline constexpr const char* kMainSource = MEMPROF_SYMBOLIZE_FIXTURE_SOURCE;

// What follows the last '/' of `path` (all of it without one).
inline std::string Basename(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// Runs binutils' objcopy (MEMPROF_OBJCOPY) with `args`; whether it succeeded.
bool Objcopy(const std::vector<std::string>& args);

}  // namespace memprof::report::symbolize::testing

#endif  // MEMPROF_TESTS_CLI_REPORT_SYMBOLIZE_TEST_SUPPORT_H_
