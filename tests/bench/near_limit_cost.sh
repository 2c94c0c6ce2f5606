#!/usr/bin/env bash
# What near-limit capture costs while the usage stays close to the share:
# Debian's redis-server with the agent preloaded, in a 256 MiB cgroup v1
# memory cgroup, filled by redis-benchmark to about 90% of it and left idle,
# armed with --capture-near-limit 90% (so the watcher polls the usage every
# 10 ms). Prints the memprof-capture thread's CPU time and wake-ups over
# SECONDS. Root, cgroup v1 memory hierarchy.
#
#   tests/bench/near_limit_cost.sh [BUILD_DIR] [SECONDS]   (default 30 s)
set -uo pipefail
build=$(cd "${1:-build}" && pwd)
secs=${2:-30}
ctl=$build/cli/memprofctl
port=16401
work=$(mktemp -d)
export MEMPROF_SOCKET_DIR=$work/sockets
mkdir -m 0700 "$MEMPROF_SOCKET_DIR"
cgroup=/sys/fs/cgroup/memory$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
cgroup=${cgroup%/}/memprof-near-limit-$$
redis=""
cleanup() {
  [ -z "$redis" ] || kill "$redis" 2>/dev/null
  wait 2>/dev/null
  rmdir "$cgroup" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$cgroup" || exit 1
echo $((256 << 20)) >"$cgroup/memory.limit_in_bytes"
(cd "$work" && exec env LD_PRELOAD="$build/agent/libmemprof_agent.so" \
  MALLOC_CONF=prof:true,prof_active:false \
  redis-server --port "$port" --save '' --appendonly no --logfile "$work/redis.log") &
redis=$!
for _ in $(seq 200); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
echo "$redis" >"$cgroup/cgroup.procs"
redis-benchmark -p "$port" -q -n 90000 -t set -d 2048 -r 100000000 -c 10 >/dev/null 2>&1
"$ctl" activate --pid "$redis" --capture-near-limit 90% >/dev/null
"$ctl" status --pid "$redis" | grep 'memory limit'
sleep 1
tid=$(grep -lx memprof-capture /proc/"$redis"/task/*/comm | head -n 1 | cut -d/ -f5)
cpu() { awk '{print $14 + $15}' /proc/"$redis"/task/"$tid"/stat; }
wakeups() { awk '/ctxt_switches/ {s += $2} END {print s + 0}' /proc/"$redis"/task/"$tid"/status; }
c1=$(cpu); w1=$(wakeups)
sleep "$secs"
c2=$(cpu); w2=$(wakeups)
echo "close to the limit, idle for ${secs} s: memprof-capture used \
$(((c2 - c1) * 1000 / $(getconf CLK_TCK))) ms of CPU, $((w2 - w1)) wake-ups"
"$ctl" status --pid "$redis" | grep -E 'memory limit|peak capture'
