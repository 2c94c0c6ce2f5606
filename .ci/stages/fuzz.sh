# shellcheck shell=bash
# Stage `fuzz`: the libFuzzer targets, built with clang-14 in ./build-fuzz.
# Sourced by dev.sh (the dispatcher), after .ci/stages/common.sh.

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
