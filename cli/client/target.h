#ifndef MEMPROF_CLI_CLIENT_TARGET_H_
#define MEMPROF_CLI_CLIENT_TARGET_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace memprof::cli {

// The PEM material of a mutual-TLS connection to a remote agent
// (--tls-ca, --tls-cert, --tls-key), read once per run.
struct TlsMaterial {
  std::string ca_pem;    // verifies the agent's certificate
  std::string cert_pem;  // our client certificate chain
  std::string key_pem;   // its private key
};

// A process with an agent the CLI has decided to talk to: a local one,
// through its Unix socket, or a remote one, over TCP with mutual TLS.
struct Target {
  // Local: as seen from the CLI's pid namespace. Remote: as the agent
  // reported it (Status), in its own host's namespace; 0 until then.
  pid_t pid = 0;
  std::string socket_path;   // local: <dir>/<pid>.sock, or /proc/<pid>/root/<dir>/<nspid>.sock
  std::string command;       // the process's comm ("Name:"), for messages; may be empty
  std::string address = {};  // remote: "host:port"; empty for a local target
  std::shared_ptr<const TlsMaterial> tls = nullptr;  // remote only

  bool remote() const { return !address.empty(); }
  // The pid to look at in this host's /proc (symbolization, pidfd): 0 for a
  // remote target, whose pid means nothing here.
  pid_t local_pid() const { return remote() ? 0 : pid; }
};

// "pid 1234 (redis-server)", "pid 1234" when the command is unknown, and
// "... on host:port" for a remote target ("the agent at host:port" before
// its pid is known).
std::string DescribeTarget(const Target& target);

// A command line as people read it: the arguments joined by one space,
// without the empty arguments and the trailing spaces a program that
// rewrites its title (setproctitle) pads it with, and trimmed at both ends.
std::string ProcessTitle(const std::vector<std::string>& argv);

// The host part of "host:port" ("[::1]:7000" -> "::1").
std::string AddressHost(const std::string& address);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_TARGET_H_
