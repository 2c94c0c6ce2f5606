#!/usr/bin/env bash
# Measures what the agent costs an idle target, side by side with the same
# workload without the agent: threads, RSS, and wake-ups per second of every
# thread other than the program's main thread.
#
#   tests/bench/idle_cost.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
secs=${2:-10}
target=$build/tests/testprogs/plain_target
agent=$build/agent/libmemprof_agent.so
ctl=$build/cli/memprofctl
jemalloc=$(/sbin/ldconfig -p | awk '/libjemalloc.so.2 /{print $NF; exit}')
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# Sum of context switches of all threads but the main one.
switches() {
  local pid=$1 total=0 t
  for t in /proc/"$pid"/task/*; do
    [ "${t##*/}" = "$pid" ] && continue
    total=$((total + $(awk '/ctxt_switches/{s+=$2} END{print s+0}' "$t/status")))
  done
  echo "$total"
}

measure() {  # label pid
  local label=$1 pid=$2 s1 s2
  s1=$(switches "$pid"); sleep "$secs"; s2=$(switches "$pid")
  printf '| %s | %s | %s | %s |\n' "$label" \
    "$(awk '/^Threads/{print $2}' /proc/"$pid"/status)" \
    "$(awk '/^VmRSS/{printf "%.1f MiB", $2/1024}' /proc/"$pid"/status)" \
    "$(awk -v a="$s1" -v b="$s2" -v s="$secs" 'BEGIN{printf "%.2f", (b-a)/s}')"
}

wait_socket() {  # pid
  for _ in $(seq 200); do [ -S "$work/$1.sock" ] && return 0; sleep 0.05; done
  echo "agent socket for $1 did not appear" >&2; return 1
}

start() {  # preload
  MEMPROF_SOCKET_DIR=$work MEMPROF_IDLE_TIMEOUT=$((secs + 3))s MALLOC_CONF=prof:true,prof_active:false \
    LD_PRELOAD=$1 "$target" &
  pids+=($!)
  echo $!
}

echo "| target ($secs s each) | threads | RSS | wake-ups/s (non-main threads) |"
echo "|---|---|---|---|"
plain=$(start "$jemalloc"); sleep 1
measure "without agent" "$plain"
with=$(start "$jemalloc:$agent"); wait_socket "$with"; sleep 1
measure "agent, never contacted" "$with"
MEMPROF_SOCKET_DIR=$work "$ctl" status --pid "$with" >/dev/null
measure "agent, gRPC server up (within idle timeout)" "$with"
sleep 3  # MEMPROF_IDLE_TIMEOUT=$((secs + 3))s has passed: the server is gone
measure "agent, after idle shutdown" "$with"
