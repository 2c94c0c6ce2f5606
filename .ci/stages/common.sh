# shellcheck shell=bash
# What every stage of dev.sh uses: the build directories, the fixed numbers,
# the section headers of the log, and the settings of a new build directory.
# Sourced by dev.sh, which sets ROOT first.
# shellcheck disable=SC2034  # the other stage scripts read these

readonly BUILD_DIR="${MEMPROF_BUILD_DIR:-${ROOT}/build}"
readonly FUZZ_BUILD_DIR="${MEMPROF_FUZZ_BUILD_DIR:-${ROOT}/build-fuzz}"
readonly SANITIZER_BUILD_PREFIX="${MEMPROF_SANITIZER_BUILD_DIR:-${ROOT}/build}"
readonly CI_FUZZ_SECONDS=30
readonly TEST_TIMEOUT_SECONDS=600
readonly AGENT_WAIT_SECONDS=30
readonly DEMO_PROFILE_SECONDS=5
readonly SOAK_DEFAULT_SECONDS=3600

# Each section says when it began and how long the script has run: CI's
# log then shows where its minutes went.
section() { printf '\n==> %s  [%s, %d s in]\n' "$*" "$(date -u +%H:%M:%S)" "${SECONDS}"; }
die() {
  echo "dev.sh: error: $*" >&2
  exit 1
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
