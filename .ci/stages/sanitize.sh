# shellcheck shell=bash
# Stage `sanitize`: the agent's tests under ASan+UBSan and under TSan.
# Sourced by dev.sh (the dispatcher), after .ci/stages/common.sh.

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
readonly SANITIZER_UNIT_TESTS="^sampler\\.|^(AgentConfig|AgentConfigRemote|AgentThread|AllocationRecorder|RecordCounter|CaptureDue|CaptureKeeper|CaptureWatcher|CloseTcpSocketsOnPort|ConnectionAcceptor|DumpLinger|DumpProgress|DumpQueue|DumpStreamer|JemallocControl|MemoryProfileService|OnDemandServer|OwnedFd|PeerAllowed|PeerRegistry|PrivateFdTable|ProfilingController|ProfilingOff|ProtoLayout|RemoteRefusal|RemoteServer|ScopedFsIdentity|SocketRegistry|TcpAddress|TlsMaterial)Test\\."
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
