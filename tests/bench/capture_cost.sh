#!/usr/bin/env bash
# What armed peak capture (`activate --capture-growth`) costs a busy target.
# One Debian redis-server (linked with jemalloc) with the agent preloaded and
# profiling active; rounds alternate "not armed" (plain activate) and "armed"
# (--capture-growth 1GiB: the watcher polls, no capture is due). Prints
# redis-benchmark requests/s per round, then, armed and idle for SECONDS, the
# CPU time and the context switches (wake-ups) of the memprof-capture thread
# from /proc/<pid>/task/<tid>/{stat,status}. As root, on a machine with a
# memory cgroup hierarchy, redis runs in a cgroup of its own with an 8 GiB
# limit, and a third column and a second idle reading arm near-limit capture
# too (--capture-near-limit 90%: the watcher also reads the cgroup's usage
# and limit every poll; no capture is due). Prints Markdown.
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
cgroup=""
cleanup() {
  [ -z "$redis" ] || kill "$redis" 2>/dev/null || true
  wait 2>/dev/null || true
  [ -z "$cgroup" ] || rmdir "$cgroup" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export MEMPROF_SOCKET_DIR=$work

LD_PRELOAD=$agent MALLOC_CONF=prof:true,prof_active:false \
  redis-server --port "$port" --save '' --appendonly no --logfile "$work/redis.log" &
redis=$!
for _ in $(seq 600); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done

# A memory cgroup for redis with an 8 GiB limit (v2 under the root when its
# hierarchy has the memory controller, else v1's memory hierarchy), or none.
make_cgroup() {
  local v2 v1
  # mountinfo: the file system type and its options follow the "-" field.
  local fields='{for (i = 7; i < NF; i++) if ($i == "-") {type = $(i + 1); opts = $(i + 3)}}'
  v2=$(awk "$fields"' type == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
  v1=$(awk "$fields"' type == "cgroup" && opts ~ /(^|,)memory(,|$)/ {print $5; exit}' \
    /proc/self/mountinfo)
  [ "$(id -u)" = 0 ] || return 0
  if [ -n "$v2" ] && grep -qw memory "$v2/cgroup.controllers" 2>/dev/null; then
    grep -qw memory "$v2/cgroup.subtree_control" || echo +memory >"$v2/cgroup.subtree_control"
    cgroup=$v2/memprof-bench-$$
    mkdir "$cgroup" && echo $((8 << 30)) >"$cgroup/memory.max"
  elif [ -n "$v1" ]; then
    cgroup=$v1$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)/memprof-bench-$$
    cgroup=${cgroup/\/\//\/}
    mkdir "$cgroup" && echo $((8 << 30)) >"$cgroup/memory.limit_in_bytes"
  else
    return 0
  fi
  echo "$redis" >"$cgroup/cgroup.procs"
}
make_cgroup
near=()
[ -z "$cgroup" ] || near=(--capture-near-limit 90%)

rps() {  # SET and GET, pipelined 16 deep: mean requests/s
  redis-benchmark -p "$port" -q -n 300000 -t set,get -P 16 -r 100000 --csv |
    awk -F'"' 'NR > 1 {sum += $4; n++} END {printf "%.0f", sum / n}'
}
watcher() {  # tid of the memprof-capture thread, or nothing
  grep -lx memprof-capture /proc/"$redis"/task/*/comm 2>/dev/null | head -n 1 | cut -d/ -f5
}
cpu_ticks() { awk '{print $14 + $15}' /proc/"$redis"/task/"$1"/stat; }  # utime + stime
switches() { awk '/ctxt_switches/{s += $2} END {print s + 0}' /proc/"$redis"/task/"$1"/status; }

if [ -n "$cgroup" ]; then
  echo "| round | not armed (req/s) | armed, 1 GiB growth (req/s) | armed, growth and near limit 90% of 8 GiB (req/s) |"
  echo "|---|---|---|---|"
else
  echo "| round | not armed (req/s) | armed, 1 GiB growth (req/s) |"
  echo "|---|---|---|"
fi
for round in $(seq "$rounds"); do
  "$ctl" deactivate --pid "$redis" >/dev/null
  "$ctl" activate --pid "$redis" >/dev/null
  plain=$(rps)
  "$ctl" activate --pid "$redis" --capture-growth 1GiB >/dev/null
  armed=$(rps)
  if [ -n "$cgroup" ]; then
    "$ctl" activate --pid "$redis" --capture-growth 1GiB "${near[@]}" >/dev/null
    echo "| $round | $plain | $armed | $(rps) |"
  else
    echo "| $round | $plain | $armed |"
  fi
done

hz=$(getconf CLK_TCK)
idle() {  # LABEL: the watcher's CPU and wake-ups over SECONDS
  local tid c1 s1 c2 s2
  tid=$(watcher)
  [ -n "$tid" ] || { echo "capture_cost.sh: no memprof-capture thread while armed" >&2; exit 1; }
  c1=$(cpu_ticks "$tid"); s1=$(switches "$tid")
  sleep "$secs"
  c2=$(cpu_ticks "$tid"); s2=$(switches "$tid")
  echo "$1, idle for ${secs} s: memprof-capture used $(awk -v t=$((c2 - c1)) -v hz="$hz" \
    'BEGIN {printf "%.0f ms", t * 1000 / hz}') of CPU, $((s2 - s1)) wake-ups \
($(awk -v s=$((s2 - s1)) -v d="$secs" 'BEGIN {printf "%.1f", s / d}')/s)"
}
echo
"$ctl" activate --pid "$redis" --capture-growth 1GiB >/dev/null
idle "armed (growth)"
if [ -n "$cgroup" ]; then
  "$ctl" activate --pid "$redis" --capture-growth 1GiB "${near[@]}" >/dev/null
  idle "armed (growth and near limit)"
fi
"$ctl" deactivate --pid "$redis" >/dev/null
for _ in $(seq 100); do [ -z "$(watcher)" ] && break; sleep 0.05; done
echo "after deactivate: memprof-capture threads: $( [ -z "$(watcher)" ] && echo 0 || echo 1)"
