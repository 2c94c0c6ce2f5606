#include "agent/core/private_fd_table.h"

#include <dirent.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

namespace memprof::agent {
namespace {

// Closes [first, last]; true if done.
bool CloseRange(unsigned first, unsigned last) {
  return ::syscall(SYS_close_range, first, last, 0u) == 0;
}

// Without close_range (Linux before 5.9): one close() per open descriptor.
void CloseAllBut(const std::vector<int>& keep) {
  DIR* dir = ::opendir("/proc/thread-self/fd");
  if (dir == nullptr) return;
  std::vector<int> open;
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && fd != ::dirfd(dir)) {
      open.push_back(static_cast<int>(fd));
    }
  }
  ::closedir(dir);
  for (int fd : open) {
    if (!std::binary_search(keep.begin(), keep.end(), fd)) ::close(fd);
  }
}

}  // namespace

bool EnterPrivateDescriptorTable(std::vector<int> keep) {
  if (::unshare(CLONE_FILES) != 0) return false;
  keep.insert(keep.end(), {0, 1, 2});
  std::erase_if(keep, [](int fd) { return fd < 0; });
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  unsigned next = 0;  // the lowest number not yet handled
  for (int fd : keep) {
    const auto kept = static_cast<unsigned>(fd);
    if (kept > next && !CloseRange(next, kept - 1) && errno == ENOSYS) {
      CloseAllBut(keep);
      return true;
    }
    next = kept + 1;
  }
  if (!CloseRange(next, UINT_MAX) && errno == ENOSYS) CloseAllBut(keep);
  return true;
}

}  // namespace memprof::agent
