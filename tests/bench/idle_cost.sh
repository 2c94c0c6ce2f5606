#!/usr/bin/env bash
# Measures what the agent costs an idle target, side by side with the same
# process without the agent: RSS (total, the difference to the process without
# the agent, anonymous and file-backed), threads, mapped shared libraries (and
# how many of them are gRPC, protobuf, abseil or OpenSSL), and wake-ups:
# context switches (voluntary + involuntary, from /proc/<pid>/task/*/status)
# summed over all threads during the measuring window. The target is `sleep`,
# with jemalloc preloaded, so every difference is the agent's. docs/contract.md
# rule 9: idle, at most 1 MiB more RSS, one thread, zero wake-ups, and none of
# the heavy libraries.
#
#   tests/bench/idle_cost.sh [BUILD_DIR] [SECONDS]   (SECONDS per row, default 10)
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

kb() { awk -v f="$2:" '$1 == f {print $2}' /proc/"$1"/status; }  # pid field

# Distinct shared libraries mapped into the process, by file name.
libraries() { awk '$6 ~ /\.so/ {n = split($6, p, "/"); print p[n]}' /proc/"$1"/maps | sort -u; }

# Those of them that an idle agent must not map.
heavy() { libraries "$1" | grep -cE '^(libgrpc|libgpr\.|libupb|libprotobuf|libabsl|libssl\.|libcrypto\.)' || true; }

base_rss=""  # VmRSS of the process without the agent, kB
measure() {  # label pid
  local label=$1 pid=$2 s1 s2 rss
  s1=$(switches "$pid"); sleep "$secs"; s2=$(switches "$pid")
  rss=$(kb "$pid" VmRSS)
  [ -n "$base_rss" ] || base_rss=$rss
  printf '| %s | %s | %s | %s | %s | %s | %s (%s heavy) | %s |\n' "$label" \
    "$(awk -v k="$rss" 'BEGIN{printf "%.1f MiB", k/1024}')" \
    "$(awk -v k="$rss" -v b="$base_rss" 'BEGIN{printf "%+.2f MiB", (k-b)/1024}')" \
    "$(awk -v k="$(kb "$pid" RssAnon)" 'BEGIN{printf "%.1f MiB", k/1024}')" \
    "$(awk -v k="$(kb "$pid" RssFile)" 'BEGIN{printf "%.1f MiB", k/1024}')" \
    "$(kb "$pid" Threads)" "$(libraries "$pid" | wc -l)" "$(heavy "$pid")" "$((s2 - s1))"
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

echo "| \`sleep\` with jemalloc | RSS | RSS vs without | RSS anon | RSS file | threads | mapped libraries | wake-ups in $secs s |"
echo "|---|---|---|---|---|---|---|---|"
[ -n "$jemalloc" ] || { echo "libjemalloc.so.2 not found by ldconfig" >&2; exit 1; }
start "$jemalloc"; plain=$started; sleep 1
measure "without agent" "$plain"
start "$jemalloc:$agent"; with=$started; wait_socket "$with"; sleep 1
measure "agent, never contacted" "$with"
MEMPROF_SOCKET_DIR=$work "$ctl" status --pid "$with" >/dev/null
measure "agent, gRPC server up (within idle timeout)" "$with"
sleep 3  # MEMPROF_IDLE_TIMEOUT=$((secs + 3))s has passed: the server is gone
measure "agent, after idle shutdown" "$with"
