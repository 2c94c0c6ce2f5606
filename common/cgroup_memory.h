#ifndef MEMPROF_COMMON_CGROUP_MEMORY_H_
#define MEMPROF_COMMON_CGROUP_MEMORY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace memprof {

// The memory limit of a memory cgroup that applies to a process: the one,
// among its cgroup and that cgroup's ancestors, with the least room left
// (the kernel's OOM killer acts on the first level whose usage reaches its
// limit).
struct CgroupMemoryLimit {
  int version = 0;          // 1 or 2
  std::string cgroup;       // the limiting cgroup, as /proc/<pid>/cgroup names it ("/a/b")
  std::string source;       // "memory.max", "memory.high" or "memory.limit_in_bytes"
  uint64_t limit_bytes = 0;
  uint64_t usage_bytes = 0;  // memory.current / memory.usage_in_bytes of that cgroup
  // Where the two figures are read again (cheaply, without walking the
  // hierarchy): that cgroup's directory, as this process sees it.
  std::string directory;
};

// One line of /proc/<pid>/cgroup: "ID:controllers:path". Version 2's has ID 0
// and no controllers.
struct CgroupMembership {
  int hierarchy = 0;
  std::vector<std::string> controllers;
  std::string path;
};
[[nodiscard]] std::vector<CgroupMembership> ParseCgroupMemberships(std::string_view text);

// A cgroup file system as /proc/<pid>/mountinfo lists it: the hierarchy's
// directory mounted (`root`, "/" unless a container was given a subtree) and
// where (`mount_point`, octal escapes undone).
struct CgroupMount {
  int version = 0;  // 1 or 2
  std::vector<std::string> controllers;  // version 1: its super options that name controllers
  std::string root;
  std::string mount_point;
};
[[nodiscard]] std::vector<CgroupMount> ParseCgroupMounts(std::string_view mountinfo);

// The directory, under `mount`, of the cgroup `path` (as /proc/<pid>/cgroup
// names it). A path outside the mounted subtree (a cgroup namespace's view)
// maps to the mount point itself.
std::string CgroupDirectory(const CgroupMount& mount, const std::string& path);

// A limit file's value: a number of bytes, or nullopt for none ("max", or
// cgroup v1's page-counter maximum, 2^63 rounded down to pages).
[[nodiscard]] std::optional<uint64_t> ParseLimitValue(std::string_view text);

// The limit that applies to process `pid` ("self" or a number), reading
// /proc and the cgroup files under `root` ("/" in production, a fake tree in
// tests). Version 2 when its hierarchy holds the process's memory
// controller, else version 1's memory hierarchy. nullopt when no level has a
// limit (or no memory controller is mounted); an error only when the files
// that say where the process is cannot be read.
[[nodiscard]] Result<std::optional<CgroupMemoryLimit>> ReadCgroupMemoryLimit(
    const std::string& root = "/", const std::string& pid = "self");

// Reads the limit and usage of `limit` again from its directory (a file or
// two for the limit, one for the usage): what the peak watcher does every
// poll.
[[nodiscard]] Result<void> RefreshCgroupMemoryLimit(CgroupMemoryLimit& limit);
// Reads only the usage again (one file): the watcher's fast polls near the
// limit.
[[nodiscard]] Result<void> RefreshCgroupMemoryUsage(CgroupMemoryLimit& limit);

}  // namespace memprof

#endif  // MEMPROF_COMMON_CGROUP_MEMORY_H_
