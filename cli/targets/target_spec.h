#ifndef MEMPROF_CLI_TARGETS_TARGET_SPEC_H_
#define MEMPROF_CLI_TARGETS_TARGET_SPEC_H_

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace memprof::cli {

// One target as the user named it, before it is looked up: a local pid, a
// Unix socket path, or a remote agent's "host:port".
struct TargetSpec {
  enum class Kind { kPid, kUnixSocket, kAddress };
  Kind kind = Kind::kPid;
  pid_t pid = 0;       // kPid
  std::string value;   // kUnixSocket: the path; kAddress: "host:port"
  std::string origin;  // where it was named, for messages: "targets.txt:3", "--pid"

  static TargetSpec Pid(pid_t pid, std::string origin = "--pid");
  static TargetSpec Address(std::string address, std::string origin = "--target");
  // What the user wrote: "1234", "unix:/path", "host:port".
  std::string ToString() const;
};

bool operator==(const TargetSpec& a, const TargetSpec& b);

// Checks a remote agent's address: HOST:PORT where HOST is a DNS name, an
// IPv4 address or an IPv6 address in brackets, and PORT is 1 to 65535.
// Returns it unchanged; kInvalidArgument (saying what a valid one looks
// like) otherwise.
[[nodiscard]] Result<std::string> ParseRemoteAddress(std::string_view text);

// One line of a --targets file: "1234", "unix:/run/x/1234.sock" or
// "host:port". Leading and trailing blanks are ignored.
[[nodiscard]] Result<TargetSpec> ParseTargetLine(std::string_view line, const std::string& origin);

// The targets a --targets file lists, one per line; blank lines and lines
// starting with '#' are skipped. A bad line fails the whole file (naming the
// file and line), before any target is contacted; so does a file that
// cannot be read. `text` is the file's contents, `name` its path.
[[nodiscard]] Result<std::vector<TargetSpec>> ParseTargetsFile(std::string_view text,
                                                               const std::string& name);

// Reads and parses the file at `path`.
[[nodiscard]] Result<std::vector<TargetSpec>> ReadTargetsFile(const std::string& path);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_TARGETS_TARGET_SPEC_H_
