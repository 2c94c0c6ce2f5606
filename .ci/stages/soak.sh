# shellcheck shell=bash
# Stage `soak`: a real redis-server with the agent under load (tests/soak/soak.py).
# Sourced by dev.sh (the dispatcher), after .ci/stages/common.sh.

# What only `bash dev.sh soak` needs, installed only by it: the real Redis it
# soaks (redis-server links Debian's jemalloc) and its load generator and
# client (redis-benchmark, redis-cli).
readonly SOAK_PACKAGES=(redis-server redis-tools)

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
