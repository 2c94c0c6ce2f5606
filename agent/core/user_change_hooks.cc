// setuid(), setreuid() and setresuid() as the host calls them, in
// libmemprof_agent.so only (not in the static core the unit tests link,
// where they would replace the test programs' own).
//
// A service that starts as root, publishes its agent's socket as root and
// then drops to its user for good (named -u bind) could not remove that
// socket at exit: in the sticky /tmp/memprof only a file's owner or root may.
// Preloaded or linked ahead of libc, these take the call first: while the
// process is still root, the socket is handed over to the user it becomes
// (Agent::PrepareUserChange), then libc's function does the change (for every
// thread, as always). Calls the host makes around libc (raw system calls,
// libcap's cap_setuid) are not seen; their sockets are left to discovery's
// pruning (docs/security.md).
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <optional>

#include "agent/core/agent.h"
#include "agent/core/user_change.h"
#include "agent/shared/agent_thread.h"

namespace memprof::agent {
namespace {

// libc's own function `name`, looked up once.
template <typename Fn>
Fn* Next(std::atomic<Fn*>& cache, const char* name) {
  Fn* fn = cache.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = reinterpret_cast<Fn*>(::dlsym(RTLD_NEXT, name));
    cache.store(fn, std::memory_order_release);
  }
  return fn;
}

UserIds CurrentIds() {
  UserIds ids;
  ::getresuid(&ids.real, &ids.effective, &ids.saved);
  return ids;
}

// Hands the socket over if `after` loses its owner for good, runs `change`
// (libc's call), and takes the socket back if libc refused. errno is the
// call's.
template <typename Change>
int ChangeUser(const UserIds& now, const UserIds& after, Change&& change) {
  std::optional<FsIdentity> previous;
  {
    const NotSampledHere quiet;  // a host thread: what the agent allocates is not the host's
    const int saved_errno = errno;
    try {
      previous = Agent::Instance().PrepareUserChange(now, after);
    } catch (...) {
      previous.reset();  // the socket stays where it was; the change goes ahead
    }
    errno = saved_errno;
  }
  const int result = change();
  if (result != 0 && previous) {
    const NotSampledHere quiet;
    const int call_errno = errno;
    try {
      Agent::Instance().UndoUserChange(*previous);
    } catch (...) {
      // The socket stays the heir's; the process can still remove it.
    }
    errno = call_errno;
  }
  return result;
}

using SetuidFn = int(uid_t);
using SetreuidFn = int(uid_t, uid_t);
using SetresuidFn = int(uid_t, uid_t, uid_t);
std::atomic<SetuidFn*> next_setuid{nullptr};
std::atomic<SetreuidFn*> next_setreuid{nullptr};
std::atomic<SetresuidFn*> next_setresuid{nullptr};

int Missing() {
  errno = ENOSYS;
  return -1;
}

}  // namespace
}  // namespace memprof::agent

using memprof::agent::ChangeUser;
using memprof::agent::CurrentIds;
using memprof::agent::Next;
using memprof::agent::UserIds;

extern "C" __attribute__((visibility("default"))) int setuid(uid_t uid) {
  auto* next = Next(memprof::agent::next_setuid, "setuid");
  if (next == nullptr) return memprof::agent::Missing();
  const UserIds now = CurrentIds();
  return ChangeUser(now, memprof::agent::AfterSetuid(now, uid, now.effective == 0),
                    [&] { return next(uid); });
}

extern "C" __attribute__((visibility("default"))) int setreuid(uid_t real, uid_t effective) {
  auto* next = Next(memprof::agent::next_setreuid, "setreuid");
  if (next == nullptr) return memprof::agent::Missing();
  const UserIds now = CurrentIds();
  return ChangeUser(now, memprof::agent::AfterSetreuid(now, real, effective),
                    [&] { return next(real, effective); });
}

extern "C" __attribute__((visibility("default"))) int setresuid(uid_t real, uid_t effective,
                                                                uid_t saved) {
  auto* next = Next(memprof::agent::next_setresuid, "setresuid");
  if (next == nullptr) return memprof::agent::Missing();
  const UserIds now = CurrentIds();
  return ChangeUser(now, memprof::agent::AfterSetresuid(now, real, effective, saved),
                    [&] { return next(real, effective, saved); });
}
