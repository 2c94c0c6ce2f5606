#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_NETNS_FIXTURE_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_NETNS_FIXTURE_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "tests/integration/harness/support_names.h"

namespace memprof::integration {

struct NetnsOptions {
  // The first three octets of a /24: side A gets <subnet>.1, side B <subnet>.2.
  std::string subnet = "10.77.0";
};

// Two network namespaces, A and B, joined by a veth pair: two hosts on one
// link, for tests of the agent's TCP listener (a target in A, a client in B).
// Each has its loopback up. Names are unique per test process and fixture
// ("memprof-<pid>-<n>-a"), so tests may run in parallel. The destructor
// deletes both namespaces (which removes the veth pair), also after a failed
// assertion; namespaces left behind by a test process that died are removed
// by the next Create().
//
// Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and iproute2's `ip`: check
// `ip` with test_support::CanRun (a missing tool fails the test), then call
// Probe() and skip the test with its reason.
class NetnsFixture {
 public:
  enum class Side { kA, kB };

  // "" when network namespaces can be made here; otherwise why not (not
  // root, `ip` missing, EPERM in a container...). Tries once per process.
  static std::string Probe();
  [[nodiscard]] static Result<std::unique_ptr<NetnsFixture>> Create(
      const NetnsOptions& options = {});

  ~NetnsFixture();
  NetnsFixture(const NetnsFixture&) = delete;
  NetnsFixture& operator=(const NetnsFixture&) = delete;

  const std::string& name(Side side) const { return side == Side::kA ? name_a_ : name_b_; }
  // "10.77.0.1" for A, "10.77.0.2" for B.
  std::string address(Side side) const;

  // The argv that runs `argv` inside the namespace: `ip netns exec NAME env
  // K=V... argv...`. `env` is given to the command only, not to `ip` (an
  // LD_PRELOADed agent must start in the target, not in `ip`). `ip netns
  // exec` and `env` exec in place: the command keeps the pid spawned.
  std::vector<std::string> Command(Side side, const std::vector<std::string>& argv,
                                   const std::map<std::string, std::string>& env = {}) const;
  // Runs Command(side, argv, env) to completion (see RunCommand).
  CommandResult Run(Side side, const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& env = {},
                    std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

 private:
  NetnsFixture(std::string name_a, std::string name_b, std::string subnet)
      : name_a_(std::move(name_a)), name_b_(std::move(name_b)), subnet_(std::move(subnet)) {}
  Result<void> Build(const std::string& veth_a, const std::string& veth_b);

  std::string name_a_;
  std::string name_b_;
  std::string subnet_;
};

// Whether a TCP socket listens on `port` in the network namespace of `pid`
// (from /proc/<pid>/net/tcp and tcp6).
bool ListensOnTcpPort(pid_t pid, uint16_t port);

// Whether process `pid` itself holds a descriptor of a socket that listens on
// `port` in its network namespace (a forked child must not hold its parent's).
bool HoldsTcpListener(pid_t pid, uint16_t port);

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_NETNS_FIXTURE_H_
