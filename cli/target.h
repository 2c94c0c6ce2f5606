#ifndef MEMPROF_CLI_TARGET_H_
#define MEMPROF_CLI_TARGET_H_

#include <sys/types.h>

#include <string>

namespace memprof::cli {

// A process with an agent socket the CLI has decided to talk to.
struct Target {
  pid_t pid = 0;            // as seen from the CLI's pid namespace
  std::string socket_path;  // <dir>/<pid>.sock, or /proc/<pid>/root/<dir>/<nspid>.sock
  std::string command;      // the process's comm ("Name:"), for messages; may be empty
};

// "pid 1234 (redis-server)" or "pid 1234" when the command is unknown.
std::string DescribeTarget(const Target& target);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_TARGET_H_
