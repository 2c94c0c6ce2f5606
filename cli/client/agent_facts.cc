#include "cli/client/agent_facts.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>

#include "cli/io/user_name.h"
#include "common/path.h"
#include "common/proc_status.h"
#include "common/text_file.h"

namespace memprof::cli {
namespace {

constexpr std::string_view kDeleted = " (deleted)";

// The path of one line of /proc/<pid>/maps: what follows the fifth field
// (address, perms, offset, dev, inode), or "" for an anonymous mapping.
std::string_view MappedPath(std::string_view line) {
  size_t pos = 0;
  for (int field = 0; field < 5; ++field) {
    pos = line.find_first_not_of(' ', pos);
    if (pos == std::string_view::npos) return {};
    pos = line.find(' ', pos);
    if (pos == std::string_view::npos) return {};
  }
  pos = line.find_first_not_of(' ', pos);
  return pos == std::string_view::npos ? std::string_view() : line.substr(pos);
}

// Whether the file name of `path` is `file` or a versioned name of it
// ("libmemprof_agent.so.1").
bool NamesFile(std::string_view path, std::string_view file) {
  const std::string_view base = PathBasename(path);
  return base == file || (base.starts_with(file) && base[file.size()] == '.');
}

std::vector<uint32_t> Numbers(std::string_view text) {
  std::vector<uint32_t> out;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    uint32_t value = 0;
    auto [next, ec] = std::from_chars(p, end, value);
    if (ec != std::errc()) break;
    out.push_back(value);
    p = next;
  }
  return out;
}

std::optional<std::string> ReadLink(const std::string& path) {
  char buf[4096];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf));
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(buf)) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

// "cannot read /proc/N/maps: Permission denied" without the path, which
// the messages name themselves.
std::string Reason(const Error& error) {
  const size_t colon = error.message.rfind(": ");
  return colon == std::string::npos ? error.message : error.message.substr(colon + 2);
}

}  // namespace

std::string AgentFacts::Env(const std::string& key) const {
  if (!environment) return "";
  auto it = environment->find(key);
  return it == environment->end() ? "" : it->second;
}

AgentMapping ParseAgentMapping(std::string_view maps) {
  AgentMapping mapping;
  while (!maps.empty()) {
    const size_t eol = maps.find('\n');
    const std::string_view line = maps.substr(0, eol);
    maps = eol == std::string_view::npos ? std::string_view() : maps.substr(eol + 1);
    std::string_view path = MappedPath(line);
    const bool deleted = path.ends_with(kDeleted);
    if (deleted) path.remove_suffix(kDeleted.size());
    if (mapping.core_path.empty() && path == kAgentCoreMemfd) {
      mapping.core_path = std::string(path);  // a memfd is always "(deleted)": not a sign here
    } else if (mapping.core_path.empty() && NamesFile(path, kAgentCoreFile)) {
      mapping.core_path = std::string(path);
      mapping.core_deleted = deleted;
    } else if (mapping.server_path.empty() &&
               (path == kAgentServerMemfd || NamesFile(path, kAgentServerFile))) {
      mapping.server_path = std::string(path);
    }
  }
  return mapping;
}

std::map<std::string, std::string> ParseAgentEnvironment(std::string_view environ) {
  std::map<std::string, std::string> out;
  for (const std::string& entry : ParseCmdline(environ)) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    std::string key = entry.substr(0, eq);
    if (key.starts_with("MEMPROF_") || key == "LD_PRELOAD") {
      out.emplace(std::move(key), entry.substr(eq + 1));
    }
  }
  return out;
}

Result<ProcessCredentials> ParseCredentials(std::string_view status) {
  ProcessCredentials c;
  bool have_uid = false;
  while (!status.empty()) {
    const size_t eol = status.find('\n');
    const std::string_view line = status.substr(0, eol);
    status = eol == std::string_view::npos ? std::string_view() : status.substr(eol + 1);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon);
    const std::vector<uint32_t> n = Numbers(line.substr(colon + 1));
    if (key == "Uid" && n.size() >= 2) {
      c.real_uid = n[0];
      c.effective_uid = n[1];
      have_uid = true;
    } else if (key == "Gid" && n.size() >= 2) {
      c.effective_gid = n[1];
    } else if (key == "Groups") {
      c.groups.assign(n.begin(), n.end());
    }
  }
  if (!have_uid) return Fail(ErrorCode::kInternal, "no Uid: line in a /proc status file");
  return c;
}

AgentFacts ReadAgentFacts(const std::string& proc_root, pid_t pid) {
  AgentFacts facts;
  facts.pid = pid;
  const std::string dir = proc_root + "/" + std::to_string(pid) + "/";
  if (auto status = ReadTextFile(dir + "status")) {
    if (auto parsed = ParseProcStatus(*status)) facts.name = parsed->name;
    if (auto credentials = ParseCredentials(*status)) facts.credentials = *credentials;
  }
  if (auto maps = ReadTextFile(dir + "maps")) {
    facts.mapping = ParseAgentMapping(*maps);
  } else {
    facts.mapping_error = Reason(maps.error());
  }
  if (auto environ = ReadTextFile(dir + "environ")) {
    facts.environment = ParseAgentEnvironment(*environ);
  } else {
    facts.environment_error = Reason(environ.error());
  }
  facts.executable = ReadLink(dir + "exe").value_or("");
  return facts;
}

PathFacts StatPath(const std::string& path) {
  PathFacts facts;
  facts.path = path;
  if (::lstat(path.c_str(), &facts.st) != 0) facts.error = errno;
  return facts;
}

bool MayWriteDirectory(const struct stat& st, const ProcessCredentials& c) {
  if (c.effective_uid == 0) return true;
  constexpr mode_t kOwner = S_IWUSR | S_IXUSR, kGroup = S_IWGRP | S_IXGRP,
                   kOther = S_IWOTH | S_IXOTH;
  if (st.st_uid == c.effective_uid) return (st.st_mode & kOwner) == kOwner;
  bool in_group = st.st_gid == c.effective_gid;
  for (gid_t g : c.groups) in_group = in_group || g == st.st_gid;
  if (in_group) return (st.st_mode & kGroup) == kGroup;
  return (st.st_mode & kOther) == kOther;
}

std::string DescribeUid(uid_t uid) {
  if (uid == 0) return "root";
  const std::string name = UserName(uid);
  const std::string number = std::to_string(uid);
  return name == number ? "uid " + number : "uid " + number + " (" + name + ")";
}

std::string ModeText(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace memprof::cli
