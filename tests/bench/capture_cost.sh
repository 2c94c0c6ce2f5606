#!/usr/bin/env bash
# What armed peak capture (`activate --capture-growth`) costs a busy target.
# One Debian redis-server (linked with jemalloc) with the agent preloaded and
# profiling active; rounds alternate "not armed" (plain activate) and "armed"
# (--capture-growth 1GiB: the watcher polls, no capture is due). Prints
# redis-benchmark requests/s per round, then, armed and idle for SECONDS, the
# CPU time and the context switches (wake-ups) of the memprof-capture thread
# from /proc/<pid>/task/<tid>/{stat,status}. Prints Markdown.
#
#   tests/bench/capture_cost.sh [BUILD_DIR] [SECONDS] [ROUNDS]   (default 30 s, 3 rounds)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
secs=${2:-30}
rounds=${3:-3}
agent=$build/agent/libmemprof_agent.so
ctl=$build/cli/memprofctl
port=16397
work=$(mktemp -d)
redis=""
cleanup() { [ -z "$redis" ] || kill "$redis" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
export MEMPROF_SOCKET_DIR=$work

LD_PRELOAD=$agent MALLOC_CONF=prof:true,prof_active:false \
  redis-server --port "$port" --save '' --appendonly no --logfile "$work/redis.log" &
redis=$!
for _ in $(seq 600); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done

rps() {  # SET and GET, pipelined 16 deep: mean requests/s
  redis-benchmark -p "$port" -q -n 300000 -t set,get -P 16 -r 100000 --csv |
    awk -F'"' 'NR > 1 {sum += $4; n++} END {printf "%.0f", sum / n}'
}
watcher() {  # tid of the memprof-capture thread, or nothing
  grep -lx memprof-capture /proc/"$redis"/task/*/comm 2>/dev/null | head -n 1 | cut -d/ -f5
}
cpu_ticks() { awk '{print $14 + $15}' /proc/"$redis"/task/"$1"/stat; }  # utime + stime
switches() { awk '/ctxt_switches/{s += $2} END {print s + 0}' /proc/"$redis"/task/"$1"/status; }

echo "| round | not armed (req/s) | armed, 1 GiB growth (req/s) |"
echo "|---|---|---|"
for round in $(seq "$rounds"); do
  "$ctl" deactivate --pid "$redis" >/dev/null
  "$ctl" activate --pid "$redis" >/dev/null
  plain=$(rps)
  "$ctl" activate --pid "$redis" --capture-growth 1GiB >/dev/null
  armed=$(rps)
  echo "| $round | $plain | $armed |"
done

tid=$(watcher)
[ -n "$tid" ] || { echo "capture_cost.sh: no memprof-capture thread while armed" >&2; exit 1; }
hz=$(getconf CLK_TCK)
c1=$(cpu_ticks "$tid"); s1=$(switches "$tid")
sleep "$secs"
c2=$(cpu_ticks "$tid"); s2=$(switches "$tid")
echo
echo "armed and idle for ${secs} s: memprof-capture used $(awk -v t=$((c2 - c1)) -v hz="$hz" \
  'BEGIN {printf "%.0f ms", t * 1000 / hz}') of CPU, $((s2 - s1)) wake-ups \
($(awk -v s=$((s2 - s1)) -v d="$secs" 'BEGIN {printf "%.1f", s / d}')/s)"
"$ctl" deactivate --pid "$redis" >/dev/null
for _ in $(seq 100); do [ -z "$(watcher)" ] && break; sleep 0.05; done
echo "after deactivate: memprof-capture threads: $( [ -z "$(watcher)" ] && echo 0 || echo 1)"
