#ifndef MEMPROF_AGENT_CORE_USER_CHANGE_H_
#define MEMPROF_AGENT_CORE_USER_CHANGE_H_

#include <sys/types.h>

#include <optional>

namespace memprof::agent {

// A process's real, effective and saved user ids.
struct UserIds {
  uid_t real = 0;
  uid_t effective = 0;
  uid_t saved = 0;
  bool operator==(const UserIds&) const = default;
  bool Has(uid_t uid) const { return real == uid || effective == uid || saved == uid; }
};

// The ids a successful setuid(), setreuid() or setresuid() leaves, by the
// kernel's rules (credentials(7)); -1 means "unchanged" as in the calls.
// `privileged`: the caller has CAP_SETUID (root, as far as the agent cares).
UserIds AfterSetuid(const UserIds& now, uid_t uid, bool privileged);
UserIds AfterSetreuid(const UserIds& now, uid_t real, uid_t effective);
UserIds AfterSetresuid(const UserIds& now, uid_t real, uid_t effective, uid_t saved);

// The user a process hands its socket to before such a call: the effective
// user it will have, when the call takes the last of its ids that is
// `owner` (the user the socket belongs to) and leaves no root id, while the
// process may still chown (effective root now). nullopt when nothing is
// lost for good: a temporary switch (seteuid, varnishd's
// setresuid(-1, uid, -1)) keeps root as the saved id, and the agent still
// acts as the owner (fs_identity.h).
std::optional<uid_t> SocketHeirOf(const UserIds& now, const UserIds& after, uid_t owner);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CORE_USER_CHANGE_H_
