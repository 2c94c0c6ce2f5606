#include "agent/heap/process_identity.h"

#include <unistd.h>

#include <climits>

#include "common/duration.h"
#include "common/proc_status.h"
#include "common/text_file.h"

namespace memprof::agent {

ProcessIdentity CurrentProcessIdentity(std::string malloc_conf) {
  ProcessIdentity id;
  id.pid = ::getpid();
  char exe[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) id.executable.assign(exe, static_cast<size_t>(n));
  if (auto cmdline = ReadTextFile("/proc/self/cmdline")) id.command_line = ParseCmdline(*cmdline);
  id.malloc_conf = std::move(malloc_conf);
  id.started_unix_ms = NowUnixMs();
  return id;
}

uint64_t CurrentRssBytes() {
  auto text = ReadTextFile("/proc/self/status");
  if (!text) return 0;
  auto status = ParseProcStatus(*text);
  return status ? status->vm_rss_bytes : 0;
}

}  // namespace memprof::agent
