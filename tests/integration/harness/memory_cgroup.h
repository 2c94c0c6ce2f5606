#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_MEMORY_CGROUP_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_MEMORY_CGROUP_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"

namespace memprof::integration {

// A memory cgroup made for one test, with a limit and no swap, so that a
// process moved into it is killed by the kernel's OOM killer when its usage
// reaches the limit. Destroying it kills what is left inside and removes it,
// also when the test failed. Root only.
class MemoryCgroup {
 public:
  // Version 2: under the root of the unified hierarchy, when it has the
  // memory controller (enabled for its children here if it is not yet).
  // Version 1: under this process's own cgroup of the memory hierarchy. An
  // error saying why when the machine cannot (no such hierarchy, no memory
  // controller, not root): the tests skip with it.
  [[nodiscard]] static Result<std::unique_ptr<MemoryCgroup>> Create(int version,
                                                                    uint64_t limit_bytes);
  ~MemoryCgroup();
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  // Moves process `pid` (every thread) into the cgroup. What it had
  // allocated so far stays charged where it was.
  [[nodiscard]] Result<void> Add(pid_t pid);

  // Sets a new limit (lower than the usage's room: the usage's share jumps
  // at once, with no allocation in the process).
  [[nodiscard]] Result<void> SetLimitBytes(uint64_t limit_bytes);

  int version() const { return version_; }
  // As /proc/<pid>/cgroup names it, e.g. "/memprof-it-1234-0".
  const std::string& path() const { return path_; }
  uint64_t limit_bytes() const { return limit_bytes_; }
  // Processes the OOM killer ended in it (memory.events / memory.oom_control).
  uint64_t OomKills() const;

 private:
  MemoryCgroup(int version, std::string directory, std::string path, uint64_t limit_bytes)
      : version_(version),
        directory_(std::move(directory)),
        path_(std::move(path)),
        limit_bytes_(limit_bytes) {}

  int version_;
  std::string directory_;  // where its files are
  std::string path_;
  uint64_t limit_bytes_;
};

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_MEMORY_CGROUP_H_
