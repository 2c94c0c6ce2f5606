#!/usr/bin/env bash
# The Debian packages, as a new user gets them: packs memprof and
# libmemprof-agent-dev with cpack under umask 002 (so the install makes
# directories 0775 unless the package sets every mode itself), fails on any
# lintian error or any file or directory mode Debian does not want, checks
# that no installed file names the build or source directory, then installs
# both on a bare Debian 12 (`debootstrap --variant=minbase bookworm`) with
# `dpkg -i` and `apt-get -f install`, and there:
#  - profiles memprof-demo under `memprofctl run` (list, activate, dump, report);
#  - builds packaging/examples/ through pkg-config and through
#    find_package(memprof), and sees each program's agent in `memprofctl list`;
#  - checks the man page and bash completion when the package has them.
#
#   bash tests/package/package_test.sh BUILD_DIR SOURCE_DIR   (ctest -L package)
#
# What it installs is BUILD_DIR as it is: cpack builds nothing (it runs the
# tree's install scripts), so run it after `bash dev.sh build`, as ctest
# does. Building the same sources a second time took ten minutes of two
# cores out of every test run. A release
# tarball of SOURCE_DIR (`git archive` of its HEAD, unpacked with umask 002,
# so every file has mode 0664) is configured without the programs and
# packed too, and the modes of those packages are checked as well: every
# file and control file they take from a tree of such files must still get
# Debian's mode. Its examples and in-root script are the ones used.
#
# MEMPROF_PACKAGE_FROM=tarball builds the packages under test from that
# tarball instead, as a user builds them, with CMake's defaults, from
# nothing (the CLI's twenty minutes on two cores): the check before a
# release.
#
# Needs root (debootstrap, chroot, mount; exits 77, ctest's skip, otherwise),
# the Debian mirror this machine's apt uses (MEMPROF_PACKAGE_MIRROR overrides)
# and about 2 GB under /var/tmp (MEMPROF_PACKAGE_PARENT). Everything it makes
# is in one temporary directory, removed on exit, also on failure.
set -euo pipefail

readonly SKIP=77
readonly SUITE=bookworm
readonly BUILD_DIR="${1:?usage: package_test.sh BUILD_DIR SOURCE_DIR}"
readonly SOURCE_DIR="${2:?usage: package_test.sh BUILD_DIR SOURCE_DIR}"
readonly CHECK=/opt/memprof-check  # our files inside the root
# Seconds to wait for an agent to answer, a profile to name the demo's
# functions, a program to exit.
readonly DEADLINE_SECONDS=60

WORK=""       # the temporary directory: debs, extracted files, the root
DEB_ROOT=""   # the Debian root, ${WORK}/root
START=${SECONDS}

log() { printf '\n==> [%(%H:%M:%S)T] %s\n' -1 "$*"; }
fail() {
  echo "package test: FAIL: $*" >&2
  exit 1
}

# shellcheck source=tests/debian_root.sh
source "${SOURCE_DIR}/tests/debian_root.sh"
# shellcheck source=tests/package/build_paths.sh
source "${SOURCE_DIR}/tests/package/build_paths.sh"

cleanup() {
  local status=$?
  if [[ -n "${DEB_ROOT}" ]]; then
    debian_root_remove "${DEB_ROOT}" || status=1
  fi
  # Only once nothing is mounted below the root: rm must not walk into /dev.
  if [[ -n "${WORK}" && ( -z "${DEB_ROOT}" || ! -d "${DEB_ROOT}" ) ]]; then
    rm -rf --one-file-system "${WORK}"
  fi
  echo "package test: took $((SECONDS - START))s"
  exit "${status}"
}

# --- the packages, on this machine ---------------------------------------------

TREE=""        # the tarball's tree, ${WORK}/memprof
TREE_BUILD=""  # its build directory, ${TREE}/build
DEBS=()        # memprof_*.deb and libmemprof-agent-dev_*.deb

# SOURCE_DIR's HEAD as a release tarball has it: `git archive` writes files
# with mode 0664 and directories 0775 (its tar.umask, 0002), and a user whose
# umask is 002 unpacks them so. A tree that is not a git checkout (a release
# tarball itself, or the copy `dev.sh fresh-check` tests, on a machine that
# may have no git) is packed by tar with the same modes, without its build
# directories.
unpack_tarball() {
  TREE="${WORK}/memprof"
  mkdir "${TREE}"
  if command -v git >/dev/null && git -C "${SOURCE_DIR}" rev-parse --git-dir >/dev/null 2>&1; then
    local commit
    commit="$(git -C "${SOURCE_DIR}" rev-parse --short HEAD)"
    log "git archive ${commit} of ${SOURCE_DIR}, unpacked with umask 002"
    if [[ -n "$(git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no)" ]]; then
      echo "note: uncommitted changes in ${SOURCE_DIR} are not in the tarball"
    fi
    git -C "${SOURCE_DIR}" archive --format=tar "${commit}" >"${WORK}/memprof.tar"
  else
    log "tar of ${SOURCE_DIR} (not a git checkout) with git archive's modes, unpacked with umask 002"
    tar -c -f "${WORK}/memprof.tar" -C "${SOURCE_DIR}" --exclude='./build*' --exclude=./.git \
      --mode='u+rw,g+rw,o+r,o-w' --owner=0 --group=0 --numeric-owner .
  fi
  (umask 002 && tar -x -f "${WORK}/memprof.tar" -C "${TREE}")
  local mode
  mode="$(stat -c %a "${TREE}/packaging/triggers")"
  [[ "${mode}" == 664 ]] || fail "the tarball's packaging/triggers has mode ${mode}, not 664"
}

# Configures the tarball under umask 002 in TREE_BUILD. By default without
# the programs (-DMEMPROF_BUILD_*=OFF): what the packages take from the tree
# itself, packed by build_debs to see that no mode comes from it. With
# MEMPROF_PACKAGE_FROM=tarball, everything, then builds what the packages
# hold there. PACKED is the build directory the packages under test come
# from, and the demo with them.
PACKED=""
configure_tarball() {
  local generator=() parts=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  [[ "${MEMPROF_PACKAGE_FROM:-build}" == tarball ]] ||
    parts=(-DMEMPROF_BUILD_AGENT=OFF -DMEMPROF_BUILD_CLI=OFF -DMEMPROF_BUILD_TESTS=OFF)
  TREE_BUILD="${TREE}/build"
  log "cmake ${generator[*]} ${parts[*]} of the tarball in ${TREE_BUILD}"
  (umask 002 && cmake -S "${TREE}" -B "${TREE_BUILD}" "${generator[@]}" "${parts[@]}" \
    >"${WORK}/configure.log" 2>&1) ||
    { tail -n 40 "${WORK}/configure.log" >&2; fail "the tarball does not configure"; }
  PACKED="${BUILD_DIR}"
  ((${#parts[@]} > 0)) && return 0
  log "build from the tarball, from nothing (MEMPROF_PACKAGE_FROM=tarball)"
  (umask 002 && cmake --build "${TREE_BUILD}" \
    --target memprofctl memprof_agent memprof_agent_server memprof-demo memprof_man \
    >"${WORK}/build.log" 2>&1) ||
    { tail -n 40 "${WORK}/build.log" >&2; fail "the tarball does not build"; }
  PACKED="${TREE_BUILD}"
}

# pack BUILD OUT: cpack of BUILD under umask 002 into OUT, where it stages
# its install too. The install's manifests, which it writes into BUILD, go
# unless they were there before.
pack() {
  local build="$1" out="$2" manifest manifests=() status=0
  for manifest in "${build}"/install_manifest_{memprof,dev}.txt; do
    [[ -e "${manifest}" ]] || manifests+=("${manifest}")
  done
  log "cpack of ${build}, under umask 002"
  (umask 002 && cpack --config "${build}/CPackConfig.cmake" -B "${out}") \
    >"${WORK}/cpack.log" 2>&1 || status=$?
  rm -f "${manifests[@]}"
  ((status == 0)) || { cat "${WORK}/cpack.log" >&2; fail "cpack of ${build} failed"; }
}

# The packages under test (DEBS, from PACKED) and, when PACKED is not the
# tarball's tree, that tree's packages without programs (TREE_DEBS): they
# hold every file and control file taken from a tree of mode-0664 files.
TREE_DEBS=()
build_debs() {
  pack "${PACKED}" "${WORK}/debs"
  DEBS=("${WORK}"/debs/memprof_*.deb "${WORK}"/debs/libmemprof-agent-dev_*.deb)
  if [[ "${PACKED}" != "${TREE_BUILD}" ]]; then
    pack "${TREE_BUILD}" "${WORK}/tree-debs"
    TREE_DEBS=("${WORK}"/tree-debs/memprof_*.deb "${WORK}"/tree-debs/libmemprof-agent-dev_*.deb)
  fi
  local deb
  for deb in "${DEBS[@]}" "${TREE_DEBS[@]}"; do
    [[ -f "${deb}" ]] || fail "cpack made no ${deb}"
  done
  for deb in "${DEBS[@]}"; do
    dpkg-deb --info "${deb}"
    dpkg-deb --contents "${deb}"
  done
}

# Each package holds what packaging/README.md says, and no more than that.
expect_contents() {
  local deb="$1" path
  shift
  local listing
  listing="$(dpkg-deb --contents "${deb}" | awk '{ print $6 }')"
  for path in "$@"; do
    grep -qxF "./${path#/}" <<<"${listing}" || fail "${deb##*/} lacks ${path}"
  done
}

check_contents() {
  local lib=usr/lib/x86_64-linux-gnu
  expect_contents "${DEBS[0]}" usr/bin/memprofctl "${lib}/libmemprof_agent.so.0" \
    "${lib}/libmemprof_agent.so.0.1.0" "${lib}/libmemprof_agent_server.so" \
    usr/share/doc/memprof/copyright usr/share/doc/memprof/changelog.Debian.gz
  expect_contents "${DEBS[1]}" usr/include/memprof/agent.h "${lib}/libmemprof_agent.so" \
    "${lib}/pkgconfig/memprof-agent.pc" "${lib}/cmake/memprof/memprofConfig.cmake" \
    usr/share/doc/libmemprof-agent-dev/copyright usr/share/doc/libmemprof-agent-dev/changelog.Debian.gz
  ! dpkg-deb --contents "${DEBS[0]}" | grep 'usr/include/' >/dev/null || fail "the header is in the runtime package"
  dpkg-deb --field "${DEBS[1]}" Depends | grep -E '^memprof \(= [^)]+\)$' >/dev/null ||
    fail "libmemprof-agent-dev does not depend on memprof (= its version)"
}

# Debian's modes (policy 10.9), whatever the tree's were: directories 0755,
# files 0644 or 0755 (programs), in the data and in the control archive.
check_modes() {
  local deb bad
  for deb in "${DEBS[@]}" "${TREE_DEBS[@]}"; do
    bad="$( (dpkg-deb --fsys-tarfile "${deb}" | tar -tv; dpkg-deb --ctrl-tarfile "${deb}" | tar -tv) |
      awk '$1 !~ /^(drwxr-xr-x|-rw-r--r--|-rwxr-xr-x|lrwxrwxrwx)$/')"
    [[ -z "${bad}" ]] || fail "${deb} has files with modes Debian does not want:
${bad}"
  done
}

run_lintian() {
  local deb out
  for deb in "${DEBS[@]}"; do
    log "lintian ${deb##*/}"
    out="$(lintian --tag-display-limit 0 "${deb}" 2>&1 || true)"
    echo "${out}"
    ! grep -q '^E: ' <<<"${out}" || fail "lintian reports errors for ${deb##*/}"
  done
}

# No installed file may name the directories memprof was built from, nor the
# checkout's, as whole paths (build_paths.sh: a checkout at /src is no leak
# of "/usr/src").
check_no_build_paths() {
  local root="$1" file hits=""
  log "strings: no ${TREE}, ${BUILD_DIR} or ${SOURCE_DIR} in the installed files"
  while read -r file; do
    [[ -f "${root}${file}" && ! -L "${root}${file}" ]] || continue
    if names_build_path "${root}${file}" "${TREE}" "${BUILD_DIR}" "${SOURCE_DIR}"; then
      hits+=" ${file}"
    fi
  done < <(chroot "${root}" dpkg -L memprof libmemprof-agent-dev)
  [[ -z "${hits}" ]] || fail "build paths in:${hits}"
}

# --- the Debian root ---------------------------------------------------------------

make_root() {
  local mirror="${MEMPROF_PACKAGE_MIRROR:-$(debian_root_mirror "${SUITE}")}"
  [[ -n "${mirror}" ]] || fail "no ${SUITE} mirror in /etc/apt/sources.list*: set MEMPROF_PACKAGE_MIRROR"
  debian_root_ensure_debootstrap
  DEB_ROOT="${WORK}/root"
  mkdir -m 0755 "${DEB_ROOT}"
  debian_root_make "${DEB_ROOT}" "${SUITE}" "${mirror}" >"${WORK}/debootstrap.log" 2>&1 ||
    { tail -n 30 "${WORK}/debootstrap.log" >&2; fail "debootstrap failed"; }
  debian_root_mount "${DEB_ROOT}"
}

# in_root COMMAND: runs a bash command as root in the root, with the
# environment of a fresh login.
in_root() {
  chroot "${DEB_ROOT}" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive /bin/bash -euo pipefail -c "$1" </dev/null
}

install_packages() {
  mkdir -p "${DEB_ROOT}${CHECK}/examples"
  cp "${DEBS[@]}" "${DEB_ROOT}${CHECK}/"
  cp "${PACKED}/tests/testprogs/memprof-demo" "${DEB_ROOT}${CHECK}/"
  cp "${TREE}"/packaging/examples/* "${DEB_ROOT}${CHECK}/examples/"
  cp "${TREE}/tests/package/in_root.sh" "${DEB_ROOT}${CHECK}/"
  log "dpkg -i, then apt-get -f install"
  in_root "apt-get update -q"
  # dpkg leaves them unconfigured, missing their dependencies: apt fetches those.
  in_root "dpkg -i ${CHECK}/*.deb || true"
  in_root "apt-get -f install -y -q"
  # (Not `tee /dev/stderr`: that opens the file stderr is anew, and truncates
  # the log of a run whose stderr is a file.)
  local installed
  installed="$(in_root "dpkg-query -W -f='\${Package} \${Version} \${Status}\n' memprof libmemprof-agent-dev")"
  echo "${installed}" >&2
  [[ "$(grep -c 'install ok installed' <<<"${installed}")" == 2 ]] ||
    fail "the packages are not both installed"
}

# --- in the root -------------------------------------------------------------------

main() {
  if [[ "$(id -u)" -ne 0 ]]; then
    echo "SKIP: the package test needs root (debootstrap, chroot and mount)"
    exit "${SKIP}"
  fi
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  WORK="$(mktemp -d "${MEMPROF_PACKAGE_PARENT:-/var/tmp}/memprof-package.XXXXXX")"
  chmod 0755 "${WORK}"
  unpack_tarball
  configure_tarball
  build_debs
  check_contents
  run_lintian
  check_modes
  make_root
  install_packages
  check_no_build_paths "${DEB_ROOT}"
  log "memprofctl run -- memprof-demo, list, activate, dump, report"
  in_root "source ${CHECK}/in_root.sh && check_demo ${CHECK}/memprof-demo ${DEADLINE_SECONDS}"
  log "packaging/examples/ through pkg-config and find_package(memprof)"
  in_root "apt-get install -y -q --no-install-recommends g++ make cmake pkg-config"
  in_root "source ${CHECK}/in_root.sh && check_examples ${CHECK}/examples ${DEADLINE_SECONDS}"
  in_root "source ${CHECK}/in_root.sh && check_docs_and_completion"
  log "package test passed"
}

main "$@"
