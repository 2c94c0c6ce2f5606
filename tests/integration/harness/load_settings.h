#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_LOAD_SETTINGS_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_LOAD_SETTINGS_H_

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

namespace memprof::integration {

// How long the load and fault scenarios run. CI runs them shortened; the
// full-length run (a minute of load, more kills, more connections)
// is selected with MEMPROF_LOAD_SECONDS=60 (any value >= 60 is full length).
struct LoadSettings {
  std::chrono::seconds load_duration{8};
  int kill_iterations = 20;
  int rapid_connections = 200;
  bool full_length = false;
};

inline constexpr int kFullLengthSeconds = 60;
inline constexpr int kMaxLoadSeconds = 3600;

// nullopt when MEMPROF_LOAD_SECONDS is set but not a number of seconds in
// 1..3600: a typo must fail the test, not silently run the CI length.
inline std::optional<LoadSettings> LoadSettingsFromEnvironment() {
  LoadSettings s;
  const char* value = std::getenv("MEMPROF_LOAD_SECONDS");
  if (value == nullptr || *value == '\0') return s;
  char* end = nullptr;
  long seconds = std::strtol(value, &end, 10);
  if (*end != '\0' || seconds < 1 || seconds > kMaxLoadSeconds) return std::nullopt;
  s.load_duration = std::chrono::seconds(seconds);
  s.full_length = seconds >= kFullLengthSeconds;
  if (s.full_length) {
    s.kill_iterations = 100;
    s.rapid_connections = 2000;
  }
  return s;
}

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_LOAD_SETTINGS_H_
