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
# Each stage's functions live in .ci/stages/<stage>.sh; this file only loads
# them and dispatches.
# shellcheck source=.ci/stages/common.sh
source "${ROOT}/.ci/stages/common.sh"
# shellcheck source=.ci/stages/deps.sh
source "${ROOT}/.ci/stages/deps.sh"
# shellcheck source=.ci/stages/build.sh
source "${ROOT}/.ci/stages/build.sh"
# shellcheck source=.ci/stages/test.sh
source "${ROOT}/.ci/stages/test.sh"
# shellcheck source=.ci/stages/fuzz.sh
source "${ROOT}/.ci/stages/fuzz.sh"
# shellcheck source=.ci/stages/sanitize.sh
source "${ROOT}/.ci/stages/sanitize.sh"
# shellcheck source=.ci/stages/demo.sh
source "${ROOT}/.ci/stages/demo.sh"
# shellcheck source=.ci/stages/soak.sh
source "${ROOT}/.ci/stages/soak.sh"

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
