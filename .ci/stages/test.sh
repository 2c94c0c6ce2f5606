# shellcheck shell=bash
# Stage `test`: deps, build, every test under CTest, a short fuzz run, then
# the agent's tests under ASan+UBSan and TSan (.ci/stages/fuzz.sh, .ci/stages/sanitize.sh).
# Sourced by dev.sh (the dispatcher), after .ci/stages/common.sh.

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
