#!/usr/bin/env bash
# Fresh-machine check: runs the README's two commands, as root, on
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
# Where the tree lands inside the root: /src, where a container build or a
# new user's checkout often is (a short path that other paths contain:
# /usr/src); not under /root (0700), since some tests run targets as an
# unprivileged user, which must reach the build.
readonly TREE=/src
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

# The mirror, debootstrap, the mounts and their cleanup: shared with the
# package test.
# shellcheck source=tests/debian_root.sh
source "${ROOT}/tests/debian_root.sh"

# Runs on every exit: never leaves a mount behind, and removes the root only
# when nothing is mounted below it any more.
cleanup() {
  local status=$?
  if [[ -n "${FRESH}" ]]; then
    debian_root_remove "${FRESH}" "${MEMPROF_FRESH_KEEP:-0}" || true
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
  local mirror="${MEMPROF_FRESH_MIRROR:-$(debian_root_mirror "${SUITE}")}"
  [[ -n "${mirror}" ]] || die "no ${SUITE} mirror in /etc/apt/sources.list*: set MEMPROF_FRESH_MIRROR"
  debian_root_ensure_debootstrap

  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  FRESH="$(mktemp -d "${MEMPROF_FRESH_PARENT:-/var/tmp}/memprof-fresh.XXXXXX")"
  # mktemp's 0700 would be the root's "/": the tests that run as another
  # user could not reach anything.
  chmod 0755 "${FRESH}"
  local start=${SECONDS}
  debian_root_make "${FRESH}" "${SUITE}" "${mirror}"
  log "debootstrap took $(((SECONDS - start) / 60))m $(((SECONDS - start) % 60))s"
  debian_root_mount "${FRESH}"
  copy_tree
  # Both, even when the first fails: each one's result is worth knowing.
  local command
  for command in "${COMMANDS[@]}"; do run_in_root "${command}"; done
  print_summary
}

main "$@"
