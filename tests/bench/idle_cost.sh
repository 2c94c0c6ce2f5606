#!/usr/bin/env bash
# Measures what the agent costs an idle target, side by side with the same
# process without the agent: threads, anonymous and file-backed RSS, and
# wake-ups (context switches) per second summed over all threads. The target
# is `sleep`, with jemalloc preloaded, so every difference is the agent's.
#
#   tests/bench/idle_cost.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
secs=${2:-10}
agent=$build/agent/libmemprof_agent.so
ctl=$build/cli/memprofctl
jemalloc=$(/sbin/ldconfig -p | awk '/libjemalloc.so.2 / && !found {print $NF; found = 1}')  # no early exit: SIGPIPE + pipefail
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# Sum of context switches of all threads.
switches() {
  local pid=$1 total=0 t
  for t in /proc/"$pid"/task/*; do
    total=$((total + $(awk '/ctxt_switches/{s+=$2} END{print s+0}' "$t/status")))
  done
  echo "$total"
}

measure() {  # label pid
  local label=$1 pid=$2 s1 s2
  s1=$(switches "$pid"); sleep "$secs"; s2=$(switches "$pid")
  printf '| %s | %s | %s | %s | %s |\n' "$label" \
    "$(awk '/^Threads/{print $2}' /proc/"$pid"/status)" \
    "$(awk '/^RssAnon/{printf "%.1f MiB", $2/1024}' /proc/"$pid"/status)" \
    "$(awk '/^RssFile/{printf "%.1f MiB", $2/1024}' /proc/"$pid"/status)" \
    "$(awk -v a="$s1" -v b="$s2" -v s="$secs" 'BEGIN{printf "%.2f", (b-a)/s}')"
}

wait_socket() {  # pid
  for _ in $(seq 200); do [ -S "$work/$1.sock" ] && return 0; sleep 0.05; done
  echo "agent socket for $1 did not appear" >&2; return 1
}

# Starts the target with LD_PRELOAD=$1 and sets $started to its pid. Not
# called through $(...): the target must be a child of this shell.
started=""
start() {  # preload
  MEMPROF_SOCKET_DIR=$work MEMPROF_IDLE_TIMEOUT=$((secs + 3))s MALLOC_CONF=prof:true,prof_active:false \
    LD_PRELOAD=$1 sleep 3600 &
  started=$!
  pids+=("$started")
}

echo "| \`sleep\` with jemalloc ($secs s each) | threads | RSS anon | RSS file | wake-ups/s |"
echo "|---|---|---|---|---|"
[ -n "$jemalloc" ] || { echo "libjemalloc.so.2 not found by ldconfig" >&2; exit 1; }
start "$jemalloc"; plain=$started; sleep 1
measure "without agent" "$plain"
start "$jemalloc:$agent"; with=$started; wait_socket "$with"; sleep 1
measure "agent, never contacted" "$with"
MEMPROF_SOCKET_DIR=$work "$ctl" status --pid "$with" >/dev/null
measure "agent, gRPC server up (within idle timeout)" "$with"
sleep 3  # MEMPROF_IDLE_TIMEOUT=$((secs + 3))s has passed: the server is gone
measure "agent, after idle shutdown" "$with"
