# shellcheck shell=bash
# Stage `demo`: the end-to-end demo against memprof-demo.
# Sourced by dev.sh (the dispatcher), after .ci/stages/common.sh.

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
