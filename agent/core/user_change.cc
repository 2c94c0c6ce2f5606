#include "agent/core/user_change.h"

namespace memprof::agent {
namespace {

constexpr uid_t kUnchanged = static_cast<uid_t>(-1);

uid_t Or(uid_t wanted, uid_t current) { return wanted == kUnchanged ? current : wanted; }

}  // namespace

UserIds AfterSetuid(const UserIds& now, uid_t uid, bool privileged) {
  if (privileged) return UserIds{uid, uid, uid};
  UserIds after = now;
  after.effective = uid;
  return after;
}

// The saved id follows the new effective one when the real id is set, or
// the effective one is set to something other than the old real id.
UserIds AfterSetreuid(const UserIds& now, uid_t real, uid_t effective) {
  UserIds after{Or(real, now.real), Or(effective, now.effective), now.saved};
  if (real != kUnchanged || (effective != kUnchanged && effective != now.real)) {
    after.saved = after.effective;
  }
  return after;
}

UserIds AfterSetresuid(const UserIds& now, uid_t real, uid_t effective, uid_t saved) {
  return UserIds{Or(real, now.real), Or(effective, now.effective), Or(saved, now.saved)};
}

std::optional<uid_t> SocketHeirOf(const UserIds& now, const UserIds& after, uid_t owner) {
  // Root in any id can still act as anyone (or become root again).
  if (now.effective != 0 || after.Has(owner) || after.Has(0)) return std::nullopt;
  return after.effective;
}

}  // namespace memprof::agent
