#!/usr/bin/env bash
# memprof developer entry point (README: "the two commands").
#
#   bash dev.sh deps    install the Debian 12 packages memprof needs (as root)
#   bash dev.sh build   configure and build everything in ./build (warnings are errors)
#   bash dev.sh test    deps + build + every test under CTest + a short fuzz run
#                       + the agent's tests under ASan+UBSan and under TSan
#   bash dev.sh sanitize [asan|tsan]
#                       build and run only the sanitizer stages (both by default)
#   bash dev.sh fuzz [SECONDS]
#                       build the libFuzzer targets with clang-14 in ./build-fuzz
#                       and fuzz the heap_v2 parser, merging and --trend, and
#                       the allocation profile parser, for SECONDS each (default 30)
#   bash dev.sh demo    deps + build + the end-to-end demo against memprof-demo
#   bash dev.sh fresh-check
#                       demo and test on a bare Debian 12 root made with
#                       debootstrap (as root; slow: see tests/fresh_check.sh)
#   bash dev.sh soak [SECONDS]
#                       a real redis-server with the agent under load for
#                       SECONDS (default 3600) while memprofctl dumps,
#                       profiles, scrapes and BGSAVE forks; then its threads,
#                       descriptors and memory are compared with before
#                       (tests/soak/soak.py; not part of `test`)
#
# MEMPROF_BUILD_DIR overrides the build directory (default: ./build),
# MEMPROF_FUZZ_BUILD_DIR the fuzzer's (default: ./build-fuzz),
# MEMPROF_SANITIZER_BUILD_DIR the prefix of the sanitizer stages' (default:
# ./build-asan and ./build-tsan).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly ROOT
readonly BUILD_DIR="${MEMPROF_BUILD_DIR:-${ROOT}/build}"
readonly FUZZ_BUILD_DIR="${MEMPROF_FUZZ_BUILD_DIR:-${ROOT}/build-fuzz}"
readonly SANITIZER_BUILD_PREFIX="${MEMPROF_SANITIZER_BUILD_DIR:-${ROOT}/build}"
readonly CI_FUZZ_SECONDS=30
readonly TEST_TIMEOUT_SECONDS=600
readonly AGENT_WAIT_SECONDS=30
readonly DEMO_PROFILE_SECONDS=5
readonly SOAK_DEFAULT_SECONDS=3600

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

# Each section says when it began and how long the script has run: CI's
# log then shows where its minutes went.
section() { printf '\n==> %s  [%s, %d s in]\n' "$*" "$(date -u +%H:%M:%S)" "${SECONDS}"; }
die() {
  echo "dev.sh: error: $*" >&2
  exit 1
}

# What only `bash dev.sh soak` needs, installed only by it: the real Redis it
# soaks (redis-server links Debian's jemalloc) and its load generator and
# client (redis-benchmark, redis-cli).
readonly SOAK_PACKAGES=(redis-server redis-tools)

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

# A new build directory gets Ninja when it is installed: it schedules the
# whole build at once, where make goes directory by directory. A directory
# that exists keeps its generator (CMake cannot switch it).
new_build_dir_settings() {
  local dir="$1"
  [[ ! -f "${dir}/CMakeCache.txt" ]] || return 0
  if command -v ninja >/dev/null; then echo "-GNinja"; fi
  # In CI, line tables and function names but no variables' or types'
  # debug information (-g1): a quarter less compile time for the same
  # machine code (the debug level never changes what GCC generates). The
  # programs the tests symbolize set their own -g (tests/testprogs).
  if [[ "${CI:-}" == true ]]; then
    echo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
    echo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
  fi
}

# Configures and builds everything, or only the given CMake targets.
cmd_build() {
  section "Build (${BUILD_DIR})${*:+: $*}"
  local settings
  mapfile -t settings < <(new_build_dir_settings "${BUILD_DIR}")
  cmake -S "${ROOT}" -B "${BUILD_DIR}" -DMEMPROF_WERROR=ON "${settings[@]}"
  local targets=()
  (($# == 0)) || targets=(--target "$@")
  cmake --build "${BUILD_DIR}" -j"$(nproc)" "${targets[@]}"
}

cmd_test() {
  cmd_deps
  cmd_build
  section "Tests"
  # The fuzzers are built meanwhile, at the lowest priority: the build takes
  # only the CPU the tests leave idle (they wait on targets and deadlines).
  # So are the sanitizer stages' trees, after the fuzzers (whose runs come
  # first once ctest is done).
  local fuzz_log
  fuzz_log="$(mktemp -t memprof-fuzz-build.XXXXXX)"
  (renice -n 19 -p "${BASHPID}" >/dev/null && fuzz_build && sanitizer_build asan &&
    sanitizer_build tsan) >"${fuzz_log}" 2>&1 &
  local fuzz_build_pid=$!
  # One test per core: the integration tests are sized for that (each has
  # its own socket directory and targets, and generous deadlines).
  local status=0
  ctest --test-dir "${BUILD_DIR}" --output-on-failure --no-tests=error \
    --timeout "${TEST_TIMEOUT_SECONDS}" --parallel "$(nproc)" || status=$?
  local fuzz_build_status=0
  wait "${fuzz_build_pid}" || fuzz_build_status=$?
  section "Fuzzer and sanitizer builds (during the tests)"
  cat "${fuzz_log}"
  rm -f "${fuzz_log}"
  ((status == 0)) || exit "${status}"
  ((fuzz_build_status == 0)) || die "the fuzzers' or sanitizers' build failed (status ${fuzz_build_status})"
  fuzz_run "${CI_FUZZ_SECONDS}" --built
  sanitizer_run asan
  sanitizer_run tsan
  section "All tests passed"
}

# Builds the libFuzzer targets (ASan + UBSan, clang-14) and runs each for $1
# seconds from its committed seed corpus: the heap_v2 parser, then merging
# several dumps and --trend. New inputs go to a temporary directory; a crash
# input is kept in ${FUZZ_BUILD_DIR} and fails the run.
# fuzz_run SECONDS [--built]: --built when fuzz_build has run already.
fuzz_run() {
  local seconds="$1"
  [[ "${seconds}" =~ ^[1-9][0-9]*$ ]] || die "fuzz: SECONDS must be a positive whole number, got '${seconds}'"
  [[ "${2:-}" == --built ]] || fuzz_build
  # All at once, a core each where there are enough (libFuzzer runs one
  # thread); their logs are printed one after the other when all are done.
  local logs=() pids=()
  logs+=("$(mktemp -t memprof-fuzz-log.XXXXXX)")
  fuzz_one heap_v2_parser_fuzz "${seconds}" "${ROOT}/tests/data/analysis/corpus" \
    >"${logs[0]}" 2>&1 &
  pids+=($!)
  logs+=("$(mktemp -t memprof-fuzz-log.XXXXXX)")
  fuzz_one merge_trend_fuzz "${seconds}" "${ROOT}/tests/data/analysis/merge_corpus" \
    "${ROOT}/tests/data/analysis/corpus" >"${logs[1]}" 2>&1 &
  pids+=($!)
  logs+=("$(mktemp -t memprof-fuzz-log.XXXXXX)")
  fuzz_one allocation_profile_fuzz "${seconds}" "${ROOT}/tests/data/analysis/alloc_corpus" \
    >"${logs[2]}" 2>&1 &
  pids+=($!)
  local i failed=0
  for i in "${!pids[@]}"; do
    wait "${pids[i]}" || failed=1
    cat "${logs[i]}"
    rm -f "${logs[i]}"
  done
  ((failed == 0)) || die "a fuzzer failed (its log is above)"
}

fuzz_build() {
  local settings
  mapfile -t settings < <(new_build_dir_settings "${FUZZ_BUILD_DIR}")
  CC=clang-14 CXX=clang++-14 cmake -S "${ROOT}" -B "${FUZZ_BUILD_DIR}" -DMEMPROF_FUZZ=ON \
    -DMEMPROF_BUILD_AGENT=OFF -DMEMPROF_WERROR=ON "${settings[@]}" >/dev/null
  cmake --build "${FUZZ_BUILD_DIR}" --target heap_v2_parser_fuzz merge_trend_fuzz \
    allocation_profile_fuzz -j"$(nproc)"
}

# fuzz_one TARGET SECONDS SEED_DIR...
fuzz_one() {
  local target="$1" seconds="$2"
  shift 2
  section "Fuzzing ${target} for ${seconds}s (${FUZZ_BUILD_DIR})"
  local corpus
  corpus="$(mktemp -d -t memprof-fuzz.XXXXXX)"
  local status=0
  (cd "${FUZZ_BUILD_DIR}" &&
    "./tests/fuzz/${target}" -max_total_time="${seconds}" -max_len=16384 \
      -rss_limit_mb=1024 -timeout=10 -print_final_stats=1 "${corpus}" "$@") || status=$?
  rm -rf "${corpus}"
  ((status == 0)) || die "${target} found a failing input (status ${status}); it is in ${FUZZ_BUILD_DIR}"
}

cmd_fuzz() {
  cmd_deps
  fuzz_run "${1:-${CI_FUZZ_SECONDS}}"
}

# --- sanitizer stages -----------------------------------------------------------
#
# The agent lives in other people's processes, so its tests run again under
# AddressSanitizer with UndefinedBehaviorSanitizer, and under ThreadSanitizer.
# Each stage has a build tree of its own with only what its tests need (the
# agent, its unit tests, the integration executables and the programs they
# start) and drives the plain build's memprofctl: the sanitizers are there for
# the code that runs inside the target. docs/reliability.md says what each
# stage covers, which tests it leaves out and why.

# What each sanitizer tree builds (the integration executables bring the
# tests/testprogs programs they start). TSan's leaves out the guest tests'
# executable: of its tests only the pre-fork ones are concurrency-heavy, and
# ForkTest covers the same handlers.
readonly ASAN_TARGETS=(memprof_agent memprof_agent_server agent_jemalloc_tests agent_prof_off_tests
  agent_sampler_tests memprof_integration_test memprof_load_fault_test memprof_guest_test)
readonly TSAN_TARGETS=(memprof_agent memprof_agent_server agent_jemalloc_tests agent_prof_off_tests
  agent_sampler_tests memprof_integration_test memprof_load_fault_test)

# Which tests each stage runs (ctest -R), by gtest name: the agent's unit
# tests, then the end-to-end tests. Under ASan and TSan the process's malloc
# is the sanitizer's, not jemalloc: the agent's unit tests allocate through
# jemalloc's own mallocx, but a target's heap profile holds none of its
# allocations, so the tests that read a profile's content, count the target's
# memory or need glibc's malloc are left out (docs/reliability.md lists what
# is and is not covered, and why).
# memprof's own sampler's unit tests (agent_sampler_tests) are all in: "sampler.".
readonly SANITIZER_UNIT_TESTS="^sampler\\.|^(AgentConfig|AgentConfigRemote|AgentThread|AllocationRecorder|RecordCounter|CaptureDue|CaptureKeeper|CaptureWatcher|CloseTcpSocketsOnPort|ConnectionAcceptor|DumpProgress|DumpQueue|DumpStreamer|JemallocControl|MemoryProfileService|OnDemandServer|OwnedFd|PeerAllowed|PeerRegistry|PrivateFdTable|ProfilingController|ProfilingOff|ProtoLayout|RemoteRefusal|RemoteServer|ScopedFsIdentity|SocketRegistry|TcpAddress|TlsMaterial)Test\\."
readonly ASAN_END_TO_END_TESTS="^(AllShapes/(Status|Activation|Lifecycle|Stats)Test\\.|AgentShapes/AgentOffTest\\.|(AgentLifecycle|Error|Fork|RemoteAgent|Prefork|UserSwitch|List|ExecChildren)Test\\.|Exits/ExecChildrenExitTest\\.|GuestCloseRange)"
# TSan: the concurrency-heavy end-to-end tests that hold under it: fork and
# remote (TLS) access. LoadTest and FaultTest are left out: they end on the
# target's RSS, which TSan's allocator does not give back.
readonly TSAN_END_TO_END_TESTS="^((Fork|RemoteAgent)Test\\.)"
# Left out of both: the target shapes started by `memprofctl run`, which
# loads the plain build's agent, not the instrumented one; the tests that
# read what a target allocated with malloc (its profile, stats.allocated);
# glibc targets (the sanitizer's malloc is not glibc's). Not selected at all:
# DumpFaultTest (its stalls need a profile bigger than gRPC's flow-control
# window, and a sanitized target's is some 50 KB) and SymbolClashTest (its
# host's grpc_init is kept off only by the deep binding the sanitizers
# refuse).
readonly SANITIZER_EXCLUDED='NOT_BUILT|/Run(Plain|Glibc)( |$)|StatsTest\.JsonHasSummaryAndTheFullJemallocObject|ActivationTest\.DeactivateKeepsSamples|ErrorTest\.GlibcTarget|UserSwitchTest\.ManagerAndWorkerAreServedAndLeaveNothingBehind|PreforkTest\.EveryWorkerIsListedAndProfiledWhileServing'
# TSan only: the one test that checks what a forked child removes itself at
# exit. GCC 12's TSan runtime kills such a child (exit 66, no destructors)
# at its first pthread_join, "dup thread with used id": it keeps the
# parent's threads registered in the child, and glibc gives the child's new
# threads the same pthread_t. The parent's agent then removes the socket,
# racing the check (docs/reliability.md, "Not covered").
readonly TSAN_EXCLUDED="${SANITIZER_EXCLUDED}|ForkTest\\.AWorkerGetsItsOwnAgentByDefaultAndLeavesTheParentsSocketAlone"

# sanitizer_spec STAGE: the stage's MEMPROF_SANITIZE.
sanitizer_spec() {
  case "$1" in
    asan) echo "address,undefined" ;;
    tsan) echo "thread" ;;
    *) die "unknown sanitizer stage '$1' (asan or tsan)" ;;
  esac
}

# sanitizer_build STAGE: configures and builds ${SANITIZER_BUILD_PREFIX}-STAGE.
sanitizer_build() {
  local stage="$1" dir="${SANITIZER_BUILD_PREFIX}-$1"
  section "Sanitizer build: ${stage} (${dir})"
  local settings
  mapfile -t settings < <(new_build_dir_settings "${dir}")
  cmake -S "${ROOT}" -B "${dir}" -DMEMPROF_WERROR=ON -DMEMPROF_SANITIZE="$(sanitizer_spec "${stage}")" \
    -DMEMPROF_IT_MEMPROFCTL="${BUILD_DIR}/cli/memprofctl" "${settings[@]}" >/dev/null
  # gtest_discover_tests runs each test executable at build time: with
  # the stage's options, a report there fails the build.
  local targets=("${ASAN_TARGETS[@]}")
  [[ "${stage}" == asan ]] || targets=("${TSAN_TARGETS[@]}")
  local logs status=0
  logs="$(mktemp -d -t memprof-sanitizer-discovery.XXXXXX)"
  sanitizer_env "${stage}" "${logs}" cmake --build "${dir}" --target "${targets[@]}" -j"$(nproc)" ||
    status=$?
  cat "${logs}"/* 2>/dev/null || true
  rm -rf "${logs}"
  return "${status}"
}

# sanitizer_env STAGE LOG_DIR CMD...: runs CMD with the stage's runtime
# options. Every report goes to a file in LOG_DIR (the target processes'
# stderr is often a pipe nobody reads to the end), and the first stops its
# process.
sanitizer_env() {
  local stage="$1" logs="$2"
  shift 2
  local common="log_path=${logs}/report:halt_on_error=1:print_stacktrace=1"
  local supp="${ROOT}/tests/sanitizers"
  case "${stage}" in
    asan)
      # alloc_dealloc_mismatch=0: ASan refuses RTLD_DEEPBIND, so the server
      # module is loaded without it, and an object gRPC deletes in its own
      # destructor (grpc::Alarm) goes to ASan's operator delete while the
      # module's operator new made it with malloc: the same heap, a different
      # name (docs/reliability.md).
      ASAN_OPTIONS="${common}:detect_leaks=${DETECT_LEAKS:-1}:alloc_dealloc_mismatch=0" \
        UBSAN_OPTIONS="${common}" \
        LSAN_OPTIONS="suppressions=${supp}/lsan.supp:print_suppressions=0" \
        "$@"
      ;;
    tsan)
      # die_after_fork=0: a multithreaded process that forks (the fork
      # tests' targets) is what TSan calls partially supported; the child
      # then runs with TSan's state of the forking thread.
      # ignore_noninstrumented_modules=1: gRPC, protobuf, abseil and OpenSSL
      # are Debian's uninstrumented builds, synchronized by locks TSan cannot
      # see; what their own code does through TSan's interceptors (memcpy,
      # epoll, read) is not reported, what our code does still is.
      # detect_deadlocks=0: jemalloc's fork handler takes all its locks at
      # once, more than the 64 TSan's deadlock detector can track per thread
      # (it fails a CHECK and kills the process).
      TSAN_OPTIONS="${common}:die_after_fork=0:ignore_noninstrumented_modules=1:detect_deadlocks=0:suppressions=${supp}/tsan.supp:print_suppressions=0" \
        "$@"
      ;;
  esac
}

# sanitizer_run STAGE: runs the stage's tests; a failed test or any report
# fails it.
sanitizer_run() {
  local stage="$1"
  section "Sanitizer tests: ${stage}, the agent's unit tests"
  # LeakSanitizer checks the unit test processes only: a forked child
  # abandons its parent's agent without destroying it, by design
  # (architecture.md, "Fork"), and the targets end by signals.
  sanitizer_ctest "${stage}" 1 "${SANITIZER_UNIT_TESTS}"
  section "Sanitizer tests: ${stage}, end to end"
  local tests="${ASAN_END_TO_END_TESTS}"
  [[ "${stage}" == asan ]] || tests="${TSAN_END_TO_END_TESTS}"
  sanitizer_ctest "${stage}" 0 "${tests}"
}

# sanitizer_ctest STAGE DETECT_LEAKS REGEX
sanitizer_ctest() {
  local stage="$1" leaks="$2" regex="$3" dir="${SANITIZER_BUILD_PREFIX}-$1"
  local excluded="${SANITIZER_EXCLUDED}"
  [[ "${stage}" == asan ]] || excluded="${TSAN_EXCLUDED}"
  local logs status=0
  logs="$(mktemp -d -t "memprof-${stage}.XXXXXX")"
  # Targets that change their user write reports here too.
  chmod 1777 "${logs}"
  DETECT_LEAKS="${leaks}" sanitizer_env "${stage}" "${logs}" \
    ctest --test-dir "${dir}" --output-on-failure --no-tests=error \
    --timeout "${TEST_TIMEOUT_SECONDS}" --parallel "$(nproc)" \
    -R "${regex}" -E "${excluded}" || status=$?
  local report reports=0
  for report in "${logs}"/*; do
    [[ -e "${report}" ]] || continue
    echo "--- ${report}"
    cat "${report}"
    # "dup thread with used id" is a defect of GCC 12's TSan runtime, not a
    # finding: it keeps a forked child's parent threads registered, and kills
    # the child (exit 66) at its first join of a new thread that got one of
    # their pthread_t (docs/reliability.md). Anything else in the file is one.
    grep -qv -e '^$' -e 'ThreadSanitizer: dup thread with used id' "${report}" || continue
    reports=$((reports + 1))
  done
  rm -rf "${logs}"
  ((reports == 0)) || die "${stage}: ${reports} sanitizer report(s) (above)"
  ((status == 0)) || die "${stage}: tests failed (status ${status})"
}

cmd_sanitize() {
  local stages=("$@")
  ((${#stages[@]} > 0)) || stages=(asan tsan)
  cmd_deps
  cmd_build memprofctl
  local stage
  for stage in "${stages[@]}"; do sanitizer_build "${stage}"; done
  for stage in "${stages[@]}"; do sanitizer_run "${stage}"; done
}

# --- demo ----------------------------------------------------------------------

DEMO_PID=""
DEMO_DIR=""

demo_cleanup() {
  if [[ -n "${DEMO_PID}" ]] && kill -0 "${DEMO_PID}" 2>/dev/null; then
    kill -TERM "${DEMO_PID}" 2>/dev/null || true
    wait "${DEMO_PID}" 2>/dev/null || true
  fi
  if [[ -n "${DEMO_DIR}" ]]; then rm -rf "${DEMO_DIR}"; fi
}

# Polls `memprofctl status` until the demo's agent answers (or gives up).
demo_wait_for_agent() {
  local memprofctl="$1" deadline=$((SECONDS + AGENT_WAIT_SECONDS))
  until "${memprofctl}" status --pid "${DEMO_PID}" >/dev/null 2>&1; do
    kill -0 "${DEMO_PID}" 2>/dev/null || die "memprof-demo (pid ${DEMO_PID}) exited before its agent answered"
    ((SECONDS < deadline)) || die "the agent in pid ${DEMO_PID} did not answer within ${AGENT_WAIT_SECONDS}s"
    sleep 0.1
  done
}

# What the demo runs, and nothing more: a newcomer waits for three
# binaries, not for the test suite.
readonly DEMO_TARGETS=(memprofctl memprof_agent memprof-demo)

cmd_demo() {
  cmd_deps
  cmd_build "${DEMO_TARGETS[@]}"
  local memprofctl="${BUILD_DIR}/cli/memprofctl"
  local demo_bin="${BUILD_DIR}/tests/testprogs/memprof-demo"
  [[ -x "${memprofctl}" ]] || die "${memprofctl} was not built"
  [[ -x "${demo_bin}" ]] || die "${demo_bin} was not built"

  trap demo_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  DEMO_DIR="$(mktemp -d -t memprof-demo.XXXXXX)"
  export MEMPROF_SOCKET_DIR="${DEMO_DIR}/sockets"
  mkdir -m 0700 "${MEMPROF_SOCKET_DIR}"
  local dump="${DEMO_DIR}/demo.heap"

  section "Starting the demo service: memprofctl run -- memprof-demo"
  "${memprofctl}" run -- "${demo_bin}" &
  DEMO_PID=$!
  demo_wait_for_agent "${memprofctl}"

  section "memprofctl status --pid ${DEMO_PID}"
  "${memprofctl}" status --pid "${DEMO_PID}"

  section "memprofctl activate --pid ${DEMO_PID} --for 1m"
  "${memprofctl}" activate --pid "${DEMO_PID}" --for 1m

  section "Letting the demo serve requests for ${DEMO_PROFILE_SECONDS}s while profiling is active"
  sleep "${DEMO_PROFILE_SECONDS}"

  section "memprofctl dump --pid ${DEMO_PID} --out ${dump}"
  "${memprofctl}" dump --pid "${DEMO_PID}" --out "${dump}"

  section "memprofctl stats --pid ${DEMO_PID}"
  "${memprofctl}" stats --pid "${DEMO_PID}"

  section "memprofctl report demo.heap --top 15"
  "${memprofctl}" report "${dump}" --top 15

  local svg="${ROOT}/memprof-demo.svg"
  # --force: the demo replaces the flame graph of its last run.
  section "memprofctl report demo.heap --format svg -o ${svg} --force"
  "${memprofctl}" report "${dump}" --format svg -o "${svg}" --force
  echo "open ${svg} in a browser: hover for details, click to zoom, Ctrl-F to search"

  section "Stopping the demo"
  kill -TERM "${DEMO_PID}"
  local status=0
  wait "${DEMO_PID}" || status=$?
  DEMO_PID=""
  ((status == 0)) || die "memprof-demo exited with status ${status}"
  echo "done: SessionRegistry::LeakSession is the leak (retained and growing)"
}

# --- soak ----------------------------------------------------------------------

# What the soak runs: the CLI and both halves of the agent.
readonly SOAK_TARGETS=(memprofctl memprof_agent memprof_agent_server)

# The soak script owns its processes and temp files and cleans them up on
# its own exit, Ctrl-C and SIGTERM; its exit status is the soak's verdict.
cmd_soak() {
  local seconds="${1:-${SOAK_DEFAULT_SECONDS}}"
  [[ "${seconds}" =~ ^[1-9][0-9]*$ ]] || die "soak: SECONDS must be a positive whole number, got '${seconds}'"
  cmd_deps
  cmd_deps "${SOAK_PACKAGES[@]}"
  cmd_build "${SOAK_TARGETS[@]}"
  section "Soak for ${seconds}s (tests/soak/soak.py)"
  exec python3 "${ROOT}/tests/soak/soak.py" --build-dir "${BUILD_DIR}" --seconds "${seconds}"
}

main() {
  cd "${ROOT}"
  case "${1:-}" in
    deps) cmd_deps ;;
    build) cmd_build ;;
    test) cmd_test ;;
    demo) cmd_demo ;;
    fuzz) cmd_fuzz "${2:-${CI_FUZZ_SECONDS}}" ;;
    sanitize) cmd_sanitize "${@:2}" ;;
    fresh-check) bash "${ROOT}/tests/fresh_check.sh" ;;
    soak) cmd_soak "${2:-${SOAK_DEFAULT_SECONDS}}" ;;
    *)
      echo "usage: bash dev.sh {deps|build|test|demo|fuzz [SECONDS]|sanitize [asan|tsan]|fresh-check|soak [SECONDS]}" >&2
      exit 2
      ;;
  esac
}

main "$@"
