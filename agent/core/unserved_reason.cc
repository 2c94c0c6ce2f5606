#include "agent/core/unserved_reason.h"

#include <sys/socket.h>

#include <algorithm>

namespace memprof::agent {
namespace {

constexpr size_t kMaxReason = 1024;

}  // namespace

void SendUnservedReason(int fd, const std::string& reason) {
  std::string line(kUnservedPrefix);
  line += reason.substr(0, kMaxReason);
  std::replace(line.begin(), line.end(), '\n', ' ');
  line += '\n';
  (void)::send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace memprof::agent
