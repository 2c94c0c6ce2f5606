#include "common/cgroup_memory.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "common/text_file.h"

namespace memprof {
namespace {

// cgroup v1 writes its "no limit" as PAGE_COUNTER_MAX pages: 2^63 rounded
// down to a page. Anything this large is no limit.
constexpr uint64_t kNoLimitFloor = uint64_t{1} << 62;

std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::string_view Trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\n");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\n") - first + 1);
}

// mountinfo escapes ' ', '\t', '\n' and '\\' as three octal digits.
std::string Unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size() &&
        text.substr(i + 1, 3).find_first_not_of("01234567") == std::string_view::npos) {
      out.push_back(static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 +
                                      (text[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  for (const auto& n : names) {
    if (n == name) return true;
  }
  return false;
}

std::optional<CgroupMount> ParseMountLine(const std::string& line) {
  const size_t dash = line.find(" - ");
  if (dash == std::string::npos) return std::nullopt;
  std::istringstream before(line.substr(0, dash));
  std::istringstream after(line.substr(dash + 3));
  std::string id, parent, device, root, mount_point, fs_type, source, options;
  if (!(before >> id >> parent >> device >> root >> mount_point)) return std::nullopt;
  if (!(after >> fs_type >> source >> options)) return std::nullopt;
  CgroupMount mount{.version = 0, .controllers = {}, .root = Unescape(root), .mount_point = Unescape(mount_point)};
  if (fs_type == "cgroup2") {
    mount.version = 2;
  } else if (fs_type == "cgroup") {
    mount.version = 1;
    mount.controllers = Split(options, ',');
  } else {
    return std::nullopt;
  }
  return mount;
}

// The smaller of a level's limits, with the file it came from; nullopt when
// it has none.
struct LevelLimit {
  uint64_t bytes;
  std::string source;
};

std::optional<LevelLimit> ReadLevelLimit(int version, const std::string& directory) {
  std::optional<LevelLimit> best;
  const std::vector<std::string> files =
      version == 2 ? std::vector<std::string>{"memory.max", "memory.high"}
                   : std::vector<std::string>{"memory.limit_in_bytes"};
  for (const auto& file : files) {
    auto text = ReadTextFile(directory + "/" + file);
    if (!text) continue;
    auto value = ParseLimitValue(*text);
    if (value && (!best || *value < best->bytes)) best = LevelLimit{*value, file};
  }
  return best;
}

Result<uint64_t> ReadUsage(int version, const std::string& directory) {
  const std::string path =
      directory + (version == 2 ? "/memory.current" : "/memory.usage_in_bytes");
  auto text = ReadTextFile(path);
  if (!text) return Fail(text.error());
  uint64_t usage = 0;
  const std::string_view trimmed = Trim(*text);
  auto [end, ec] = std::from_chars(trimmed.data(), trimmed.data() + trimmed.size(), usage);
  if (ec != std::errc() || end != trimmed.data() + trimmed.size()) {
    return Fail(ErrorCode::kInternal, path + " holds no byte count");
  }
  return usage;
}

// The parent of a cgroup path: "/a/b" -> "/a", "/a" -> "/".
std::string ParentPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// Walks from `path` up to the top of `mount`, keeping the level with the
// least room left.
std::optional<CgroupMemoryLimit> TightestLevel(const CgroupMount& mount, std::string path) {
  std::optional<CgroupMemoryLimit> tightest;
  for (;;) {
    const std::string directory = CgroupDirectory(mount, path);
    auto limit = ReadLevelLimit(mount.version, directory);
    auto usage = limit ? ReadUsage(mount.version, directory) : Result<uint64_t>(0);
    if (limit && usage) {
      const uint64_t room = limit->bytes > *usage ? limit->bytes - *usage : 0;
      if (!tightest || room < tightest->limit_bytes - std::min(tightest->limit_bytes,
                                                               tightest->usage_bytes)) {
        tightest = CgroupMemoryLimit{mount.version, path,    limit->source,
                                     limit->bytes,  *usage,  directory};
      }
    }
    if (path == "/" || directory == mount.mount_point) return tightest;
    path = ParentPath(path);
  }
}

bool HoldsMemoryController(const CgroupMount& mount) {
  if (mount.version == 1) return Contains(mount.controllers, "memory");
  auto controllers = ReadTextFile(mount.mount_point + "/cgroup.controllers");
  if (!controllers) return false;
  std::istringstream names{*controllers};
  for (std::string name; names >> name;) {
    if (name == "memory") return true;
  }
  return false;
}

std::string UnderRoot(const std::string& root, const std::string& path) {
  if (root.empty() || root == "/") return path;
  return (root.back() == '/' ? root.substr(0, root.size() - 1) : root) + path;
}

}  // namespace

std::vector<CgroupMembership> ParseCgroupMemberships(std::string_view text) {
  std::vector<CgroupMembership> memberships;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    CgroupMembership m;
    const std::string id = line.substr(0, first);
    if (std::from_chars(id.data(), id.data() + id.size(), m.hierarchy).ec != std::errc()) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    if (!controllers.empty()) m.controllers = Split(controllers, ',');
    m.path = line.substr(second + 1);
    memberships.push_back(std::move(m));
  }
  return memberships;
}

std::vector<CgroupMount> ParseCgroupMounts(std::string_view mountinfo) {
  std::vector<CgroupMount> mounts;
  std::istringstream lines{std::string(mountinfo)};
  for (std::string line; std::getline(lines, line);) {
    if (auto mount = ParseMountLine(line)) mounts.push_back(std::move(*mount));
  }
  return mounts;
}

std::string CgroupDirectory(const CgroupMount& mount, const std::string& path) {
  const std::string& root = mount.root;
  std::string relative;
  if (root == "/") {
    relative = path == "/" ? "" : path;
  } else if (path == root) {
    relative = "";
  } else if (path.starts_with(root + "/")) {
    relative = path.substr(root.size());
  }
  return mount.mount_point + relative;
}

std::optional<uint64_t> ParseLimitValue(std::string_view text) {
  const std::string_view value = Trim(text);
  uint64_t bytes = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), bytes);
  if (ec != std::errc() || end != value.data() + value.size() || bytes >= kNoLimitFloor) {
    return std::nullopt;
  }
  return bytes;
}

Result<std::optional<CgroupMemoryLimit>> ReadCgroupMemoryLimit(const std::string& root,
                                                               const std::string& pid) {
  auto cgroups = ReadTextFile(UnderRoot(root, "/proc/" + pid + "/cgroup"));
  if (!cgroups) return Fail(cgroups.error());
  auto mountinfo = ReadTextFile(UnderRoot(root, "/proc/" + pid + "/mountinfo"));
  if (!mountinfo) return Fail(mountinfo.error());
  const auto memberships = ParseCgroupMemberships(*cgroups);
  std::vector<CgroupMount> mounts = ParseCgroupMounts(*mountinfo);
  for (auto& mount : mounts) mount.mount_point = UnderRoot(root, mount.mount_point);
  // Version 2 first: a hybrid system may mount both, with memory in either.
  for (int version : {2, 1}) {
    for (const auto& mount : mounts) {
      if (mount.version != version || !HoldsMemoryController(mount)) continue;
      for (const auto& m : memberships) {
        const bool same = version == 2 ? m.hierarchy == 0 : Contains(m.controllers, "memory");
        if (same) return TightestLevel(mount, m.path);
      }
    }
  }
  return std::optional<CgroupMemoryLimit>();
}

Result<void> RefreshCgroupMemoryLimit(CgroupMemoryLimit& limit) {
  auto level = ReadLevelLimit(limit.version, limit.directory);
  if (!level) {
    return Fail(ErrorCode::kNotFound, "the memory limit of cgroup " + limit.cgroup + " is gone");
  }
  auto usage = ReadUsage(limit.version, limit.directory);
  if (!usage) return Fail(usage.error());
  limit.limit_bytes = level->bytes;
  limit.source = level->source;
  limit.usage_bytes = *usage;
  return {};
}

Result<void> RefreshCgroupMemoryUsage(CgroupMemoryLimit& limit) {
  auto usage = ReadUsage(limit.version, limit.directory);
  if (!usage) return Fail(usage.error());
  limit.usage_bytes = *usage;
  return {};
}

}  // namespace memprof
