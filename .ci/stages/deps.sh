# shellcheck shell=bash
# Stage `deps`: the Debian 12 packages memprof needs, installed where missing.
# Sourced by dev.sh (the dispatcher), after .ci/stages/common.sh.

# Everything a fresh Debian 12 needs to build, test and demo memprof.
# jeprof ships in libjemalloc-dev and needs perl, binutils (addr2line, nm)
# and file: it runs /usr/bin/file to learn a binary's type, and without it
# takes the binary for a Windows one and exits 1 ("No 'addr2line-pdb' found").
# `bash dev.sh fresh-check` shows what a bare Debian 12 lacks.
readonly PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libjemalloc-dev
  # gperftools: malloc_extension.h for the agent's tcmalloc support, libtcmalloc
  # for the tests' tcmalloc target.
  libgoogle-perftools-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libcli11-dev libspdlog-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev
  libdw-dev libelf-dev zlib1g-dev libssl-dev
  # nghttp2: HTTP/2 for the one-shot unary calls to a local agent.
  libnghttp2-dev
  libmicrohttpd-dev
  libxml2-dev
  golang-github-google-pprof-dev
  binutils procps perl file
  # The man pages are made from memprofctl's help by help2man at build time.
  help2man
  # Test-only: the real pprof (built from Debian's sources with go) reads our
  # pprof output; headless chromium renders the svg flame graph; xmllint
  # checks it; redis-server is a third-party jemalloc target; promtool
  # (package prometheus) checks the exporter's exposition format.
  golang-go chromium libxml2-utils prometheus debuginfod
  # The remote-agent tests join two network namespaces by a veth pair with ip
  # (iproute2); their certificates are made in memory (tests/support/pki).
  iproute2
  # tests/docs: groff renders the man pages, zsh runs the zsh completion,
  # systemd-analyze (package systemd) verifies the example unit.
  groff-base zsh systemd
  # The package test (tests/package/): cpack's dpkg-shlibdeps comes with
  # build-essential's dpkg-dev; lintian checks the .debs, debootstrap makes
  # the bare Debian 12 they are installed on.
  lintian debootstrap
  # The JSON output is validated against docs/schemas (tests/schemas).
  python3 python3-jsonschema
  # gperftools' tcmalloc: the testprog that writes real gperftools heap
  # profiles for the report tests.
  libgoogle-perftools-dev
  # mimalloc: one of the allocators memprof's own sampler is tested on.
  libmimalloc2.0
  # Fuzzing: libFuzzer and the sanitizer runtimes come with clang.
  clang-14 libclang-rt-14-dev
)

# missing_packages PKG...: those of PKG (default: PACKAGES) not installed.
missing_packages() {
  local pkg packages=("$@")
  (($# > 0)) || packages=("${PACKAGES[@]}")
  for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${Status}\n' "${pkg}" 2>/dev/null | grep -q '^install ok installed$' ||
      echo "${pkg}"
  done
}

# cmd_deps [PKG...]: installs PKG (default: PACKAGES) where missing.
cmd_deps() {
  section "Debian packages${*:+: $*}"
  local packages=("$@")
  (($# > 0)) || packages=("${PACKAGES[@]}")
  local missing
  missing="$(missing_packages "${packages[@]}")"
  if [[ -z "${missing}" ]]; then
    echo "all ${#packages[@]} packages are installed"
    return
  fi
  local sudo=()
  if [[ "$(id -u)" -ne 0 ]]; then
    command -v sudo >/dev/null || die "installing packages needs root: run 'bash dev.sh deps' as root"
    sudo=(sudo)
  fi
  echo "missing: ${missing//$'\n'/ }"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${packages[@]}"
}
