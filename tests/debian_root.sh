# shellcheck shell=bash
# A bare Debian root made with `debootstrap --variant=minbase`, shared by the
# fresh-machine check (tests/fresh_check.sh) and the package test
# (tests/package/package_test.sh). Sourced, not run; the caller sets
# `set -euo pipefail` and defines log().
#
#   mirror="$(debian_root_mirror bookworm)"
#   debian_root_make "${root}" bookworm "${mirror}"
#   debian_root_mount "${root}"
#   ...
#   debian_root_remove "${root}"      # in the EXIT trap

# Prints the URI of the first apt source that serves SUITE itself (not
# -updates or -security), from one-line .list files and deb822 .sources files.
debian_root_mirror() {
  local suite="$1"
  local files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources)
  local existing=() f
  for f in "${files[@]}"; do [[ -f "${f}" ]] && existing+=("${f}"); done
  ((${#existing[@]} > 0)) || return 0
  awk -v suite="${suite}" '
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

debian_root_ensure_debootstrap() {
  command -v debootstrap >/dev/null && return
  log "Installing debootstrap on this machine"
  # Try without an update first: a stale or unreachable extra source should
  # not stop us when the package is already known.
  DEBIAN_FRONTEND=noninteractive apt-get install -y debootstrap ||
    { DEBIAN_FRONTEND=noninteractive apt-get update || true
      DEBIAN_FRONTEND=noninteractive apt-get install -y debootstrap; }
}

# debian_root_make ROOT SUITE MIRROR
debian_root_make() {
  local root="$1" suite="$2" mirror="$3"
  log "debootstrap --variant=minbase ${suite} ${root} ${mirror}"
  debootstrap --variant=minbase "${suite}" "${root}" "${mirror}"
  # For apt's name lookups inside; a fresh machine has its own resolv.conf.
  cp -L /etc/resolv.conf "${root}/etc/resolv.conf"
  # The root shares this machine's network: daemons that packages start on
  # installation (prometheus...) would take ports on it. A chroot's usual
  # policy: start none. Our tests start what they need themselves.
  printf '#!/bin/sh\nexit 101\n' >"${root}/usr/sbin/policy-rc.d"
  chmod 0755 "${root}/usr/sbin/policy-rc.d"
}

# What a booted machine has, so that tests fail only for reasons in our tree:
# - the root bound onto itself: `unshare --mount` makes / private, which
#   needs / to be a mount point (bad_input_test, container_test);
# - /proc and /sys (target discovery, network namespaces);
# - /dev recursively, for /dev/pts (pty tests) and /dev/shm (Chromium);
# - a tmpfs on /tmp, as on a machine whose /tmp is tmpfs.
# Each is made private or a slave, so that nothing mounted or unmounted in
# here propagates back to this machine's own /dev or /.
debian_root_mount() {
  local root="$1"
  mount --bind "${root}" "${root}"
  mount --make-private "${root}"
  mount -t proc proc "${root}/proc"
  mount -t sysfs sysfs "${root}/sys"
  mount --rbind /dev "${root}/dev"
  mount --make-rslave "${root}/dev"
  mount -t tmpfs -o mode=1777 tmpfs "${root}/tmp"
}

# Mount points at or below ROOT, deepest first.
debian_root_mounts_below() {
  awk -v root="$1" '$5 == root || index($5, root "/") == 1 { print $5 }' /proc/self/mountinfo |
    LC_ALL=C sort -r
}

# Kills what is still running inside ROOT (a test's leftover, a gpg-agent
# started by apt): it would keep the mounts busy.
debian_root_kill_processes() {
  local root="$1" proc pid
  for proc in /proc/[0-9]*; do
    pid="${proc#/proc/}"
    [[ "$(readlink "${proc}/root" 2>/dev/null)" == "${root}" ]] && kill -KILL "${pid}" 2>/dev/null
  done
  return 0
}

debian_root_unmount() {
  local root="$1" target
  debian_root_kill_processes "${root}"
  while read -r target; do
    [[ -n "${target}" ]] && { umount "${target}" 2>/dev/null || umount --lazy "${target}"; }
  done < <(debian_root_mounts_below "${root}")
}

# debian_root_remove ROOT [keep]: unmounts everything below ROOT and removes
# it, but only when nothing is mounted below it any more (rm must not walk
# into /dev). With keep=1 the unmounted root stays. Fails if a mount remains.
debian_root_remove() {
  local root="$1" keep="${2:-0}"
  [[ -n "${root}" && -d "${root}" ]] || return 0
  debian_root_unmount "${root}"
  if [[ -n "$(debian_root_mounts_below "${root}")" ]]; then
    echo "still mounted below ${root}, not removing it:" >&2
    debian_root_mounts_below "${root}" >&2
    return 1
  fi
  if [[ "${keep}" == 1 ]]; then
    echo "kept ${root}"
  else
    rm -rf --one-file-system "${root}"
  fi
}
