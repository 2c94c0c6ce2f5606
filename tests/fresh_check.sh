#!/usr/bin/env bash
# Fresh-machine check (issue 17): runs the README's two commands, as root, on
# a bare Debian 12 made with `debootstrap --variant=minbase bookworm`, so that
# a package missing from dev.sh's list fails here instead of on a new user's
# machine (a developer's machine has too much installed to notice).
#
#   bash dev.sh fresh-check          (or: bash tests/fresh_check.sh)
#
# Needs root, about 6 GB of disk and the Debian mirror this machine's apt
# uses. It copies the committed tree (HEAD, not the working tree and not
# build outputs), runs `bash dev.sh demo` and then `bash dev.sh test` in a
# chroot with a clean environment, prints how long each took, and removes the
# root again, also when something fails or it is interrupted.
#
# Environment:
#   MEMPROF_FRESH_MIRROR   Debian mirror (default: the first bookworm one in
#                          /etc/apt/sources.list{,.d/*})
#   MEMPROF_FRESH_PARENT   where the root is made (default: /var/tmp)
#   MEMPROF_FRESH_KEEP=1   keep the (unmounted) root afterwards, to look into
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly ROOT
readonly SUITE=bookworm
# Where the tree lands inside the root: not under /root (0700), since some
# tests run targets as an unprivileged user, which must reach the build.
readonly TREE=/opt/memprof
readonly COMMANDS=("bash dev.sh demo" "bash dev.sh test")

FRESH=""            # the root directory; set once it exists
COMMIT=""           # the commit copied into it
declare -A ELAPSED  # README command -> "42m 7s"
declare -A STATUS   # README command -> exit status

log() { printf '\n==> [%(%H:%M:%S)T] %s\n' -1 "$*"; }
die() {
  echo "fresh-check: error: $*" >&2
  exit 1
}

# --- the mirror and debootstrap ----------------------------------------------

# Prints the URI of the first apt source that serves ${SUITE} itself (not
# -updates or -security), from one-line .list files and deb822 .sources files.
host_mirror() {
  local files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources)
  local existing=() f
  for f in "${files[@]}"; do [[ -f "${f}" ]] && existing+=("${f}"); done
  ((${#existing[@]} > 0)) || return 0
  awk -v suite="${SUITE}" '
    # One-line format: deb [options] URI SUITE COMPONENTS...
    /^[[:space:]]*deb[[:space:]]/ {
      i = 2
      if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
      if ($(i + 1) == suite) { print $i; exit }
      next
    }
    # deb822 format: a stanza per blank-line-separated paragraph.
    /^[[:space:]]*$/ { if (uri != "" && has_suite && is_deb) { print uri; exit } uri = ""; has_suite = 0; is_deb = 0; next }
    tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") is_deb = 1 }
    tolower($1) == "uris:" { uri = $2 }
    tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == suite) has_suite = 1 }
    END { if (uri != "" && has_suite && is_deb) print uri }
  ' "${existing[@]}" | head -n 1
}

ensure_debootstrap() {
  command -v debootstrap >/dev/null && return
  log "Installing debootstrap on this machine"
  # Try without an update first: a stale or unreachable extra source should
  # not stop us when the package is already known.
  DEBIAN_FRONTEND=noninteractive apt-get install -y debootstrap ||
    { DEBIAN_FRONTEND=noninteractive apt-get update || true
      DEBIAN_FRONTEND=noninteractive apt-get install -y debootstrap; }
}

make_root() {
  local mirror="$1"
  log "debootstrap --variant=minbase ${SUITE} ${FRESH} ${mirror}"
  debootstrap --variant=minbase "${SUITE}" "${FRESH}" "${mirror}"
  # For apt's name lookups inside; a fresh machine has its own resolv.conf.
  cp -L /etc/resolv.conf "${FRESH}/etc/resolv.conf"
  # The root shares this machine's network: daemons that packages start on
  # installation (prometheus...) would take ports on it. A chroot's usual
  # policy: start none. Our tests start what they need themselves.
  printf '#!/bin/sh\nexit 101\n' >"${FRESH}/usr/sbin/policy-rc.d"
  chmod 0755 "${FRESH}/usr/sbin/policy-rc.d"
}

# --- mounts -----------------------------------------------------------------

# What a booted machine has, so that tests fail only for reasons in our tree:
# - the root bound onto itself: `unshare --mount` makes / private, which
#   needs / to be a mount point (bad_input_test, container_test);
# - /proc and /sys (target discovery, network namespaces);
# - /dev recursively, for /dev/pts (pty tests) and /dev/shm (Chromium);
# - a tmpfs on /tmp, as on a machine whose /tmp is tmpfs.
# Each is made private or a slave, so that nothing mounted or unmounted in
# here propagates back to this machine's own /dev or /.
mount_all() {
  mount --bind "${FRESH}" "${FRESH}"
  mount --make-private "${FRESH}"
  mount -t proc proc "${FRESH}/proc"
  mount -t sysfs sysfs "${FRESH}/sys"
  mount --rbind /dev "${FRESH}/dev"
  mount --make-rslave "${FRESH}/dev"
  mount -t tmpfs -o mode=1777 tmpfs "${FRESH}/tmp"
}

# Mount points at or below the root, deepest first.
mounts_below_root() {
  awk -v root="${FRESH}" '$5 == root || index($5, root "/") == 1 { print $5 }' /proc/self/mountinfo |
    LC_ALL=C sort -r
}

# Kills what is still running inside the root (a test's leftover, a
# gpg-agent started by apt): it would keep the mounts busy.
kill_processes_in_root() {
  local proc pid
  for proc in /proc/[0-9]*; do
    pid="${proc#/proc/}"
    [[ "$(readlink "${proc}/root" 2>/dev/null)" == "${FRESH}" ]] && kill -KILL "${pid}" 2>/dev/null
  done
  return 0
}

unmount_all() {
  kill_processes_in_root
  local target
  while read -r target; do
    [[ -n "${target}" ]] && { umount "${target}" 2>/dev/null || umount --lazy "${target}"; }
  done < <(mounts_below_root)
}

# Runs on every exit: never leaves a mount behind, and removes the root only
# when nothing is mounted below it any more (rm must not walk into /dev).
cleanup() {
  local status=$?
  if [[ -n "${FRESH}" && -d "${FRESH}" ]]; then
    unmount_all
    if [[ -n "$(mounts_below_root)" ]]; then
      echo "fresh-check: still mounted below ${FRESH}, not removing it:" >&2
      mounts_below_root >&2
    elif [[ "${MEMPROF_FRESH_KEEP:-0}" == 1 ]]; then
      echo "fresh-check: kept ${FRESH} (MEMPROF_FRESH_KEEP=1)"
    else
      rm -rf --one-file-system "${FRESH}"
    fi
  fi
  exit "${status}"
}

# --- the README commands ------------------------------------------------------

copy_tree() {
  # Resolved once: HEAD may move while the check runs (it takes an hour).
  COMMIT="$(git -C "${ROOT}" rev-parse --short HEAD)"
  log "Copying the committed tree (${COMMIT}) to ${TREE}"
  if [[ -n "$(git -C "${ROOT}" status --porcelain --untracked-files=no)" ]]; then
    echo "note: uncommitted changes in ${ROOT} are not part of the check"
  fi
  mkdir -p "${FRESH}${TREE}"
  git -C "${ROOT}" archive --format=tar "${COMMIT}" | tar -x -C "${FRESH}${TREE}"
}

# Runs one README command as root in the root, with the environment of a
# fresh login (nothing inherited from this shell, such as a ccache launcher).
run_in_root() {
  local command="$1" start=${SECONDS} status=0
  log "chroot: ${command}"
  chroot "${FRESH}" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c "cd ${TREE} && ${command}" </dev/null || status=$?
  local seconds=$((SECONDS - start))
  ELAPSED["${command}"]="$((seconds / 60))m $((seconds % 60))s"
  STATUS["${command}"]=${status}
}

print_summary() {
  log "Fresh-machine check of ${COMMIT} on Debian ${SUITE} (minbase)"
  local command failed=0
  for command in "${COMMANDS[@]}"; do
    local status=${STATUS["${command}"]:-not run}
    printf '  %-18s %-10s %s\n' "${command}" "${ELAPSED["${command}"]:--}" \
      "$([[ "${status}" == 0 ]] && echo passed || echo "FAILED (exit ${status})")"
    [[ "${status}" == 0 ]] || failed=1
  done
  return "${failed}"
}

main() {
  [[ "$(id -u)" -eq 0 ]] || die "run as root: debootstrap, chroot and mount need it"
  command -v git >/dev/null || die "git is needed to copy the committed tree"
  local mirror="${MEMPROF_FRESH_MIRROR:-$(host_mirror)}"
  [[ -n "${mirror}" ]] || die "no ${SUITE} mirror in /etc/apt/sources.list*: set MEMPROF_FRESH_MIRROR"
  ensure_debootstrap

  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  FRESH="$(mktemp -d "${MEMPROF_FRESH_PARENT:-/var/tmp}/memprof-fresh.XXXXXX")"
  # mktemp's 0700 would be the root's "/": the tests that run as another
  # user could not reach anything.
  chmod 0755 "${FRESH}"
  local start=${SECONDS}
  make_root "${mirror}"
  log "debootstrap took $(((SECONDS - start) / 60))m $(((SECONDS - start) % 60))s"
  mount_all
  copy_tree
  # Both, even when the first fails: each one's result is worth knowing.
  local command
  for command in "${COMMANDS[@]}"; do run_in_root "${command}"; done
  print_summary
}

main "$@"
