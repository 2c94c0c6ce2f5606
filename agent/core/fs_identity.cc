#include "agent/core/fs_identity.h"

#include <sys/fsuid.h>
#include <unistd.h>

namespace memprof::agent {
namespace {

// setfsuid() and setfsgid() return the previous value whether or not they
// changed it, and never touch errno; an invalid id (-1) changes nothing.
uid_t CurrentFsUid() { return static_cast<uid_t>(::setfsuid(static_cast<uid_t>(-1))); }
gid_t CurrentFsGid() { return static_cast<gid_t>(::setfsgid(static_cast<gid_t>(-1))); }

}  // namespace

FsIdentity EffectiveIdentity() { return FsIdentity{::geteuid(), ::getegid()}; }

ScopedFsIdentity::ScopedFsIdentity(FsIdentity id)
    : wanted_(id), previous_{CurrentFsUid(), CurrentFsGid()} {}

ScopedFsIdentity::~ScopedFsIdentity() {
  // Only what this scope set is put back: a host thread that changed the
  // process's user meanwhile gave this thread its new identity already.
  if (CurrentFsUid() == wanted_.uid && previous_.uid != wanted_.uid) ::setfsuid(previous_.uid);
  if (CurrentFsGid() == wanted_.gid && previous_.gid != wanted_.gid) ::setfsgid(previous_.gid);
}

// The group first: once the user is no longer root, the thread may have
// lost the capability to choose its group.
void ScopedFsIdentity::Apply() const {
  if (CurrentFsGid() != wanted_.gid) ::setfsgid(wanted_.gid);
  if (CurrentFsUid() != wanted_.uid) ::setfsuid(wanted_.uid);
}

bool ScopedFsIdentity::Contested() const {
  return EffectiveIdentity() != wanted_ || CurrentFsUid() != wanted_.uid ||
         CurrentFsGid() != wanted_.gid;
}

}  // namespace memprof::agent
