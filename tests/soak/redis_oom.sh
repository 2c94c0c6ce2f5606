#!/usr/bin/env bash
# The profile from just before an OOM kill, on a real server: Debian's
# redis-server (jemalloc) with the agent preloaded, moved into a 256 MiB
# cgroup v1 memory cgroup with no swap, filled by redis-benchmark (SET of
# 2 KiB values, keys never repeated) until the kernel's OOM killer ends it,
# with `activate --capture-near-limit 90%` armed and `dump --captured
# --follow` writing the captures. Prints how redis ended, the captures
# written, and the report of the last one. Root, cgroup v1 memory hierarchy
# (a v2-only machine: use a v2 cgroup by hand). Not in CI: it needs the OOM
# killer. docs/reliability.md, "Near an OOM kill, in a real server".
#
#   tests/soak/redis_oom.sh [BUILD_DIR]
set -uo pipefail
build=$(cd "${1:-build}" && pwd)
ctl=$build/cli/memprofctl
port=16400
work=$(mktemp -d)
export MEMPROF_SOCKET_DIR=$work/sockets
mkdir -m 0700 "$MEMPROF_SOCKET_DIR" "$work/caps"
cgroup=/sys/fs/cgroup/memory$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
cgroup=${cgroup%/}/memprof-redis-oom-$$
redis=""
cleanup() {
  [ -z "$redis" ] || kill -9 "$redis" 2>/dev/null
  kill $(jobs -p) 2>/dev/null
  wait 2>/dev/null
  rmdir "$cgroup" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$cgroup" || exit 1
echo $((256 << 20)) >"$cgroup/memory.limit_in_bytes"
[ ! -e "$cgroup/memory.memsw.limit_in_bytes" ] || echo $((256 << 20)) >"$cgroup/memory.memsw.limit_in_bytes"

(cd "$work" && exec env LD_PRELOAD="$build/agent/libmemprof_agent.so" \
  MALLOC_CONF=prof:true,prof_active:false \
  redis-server --port "$port" --save '' --appendonly no --logfile "$work/redis.log") &
redis=$!
for _ in $(seq 200); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
echo "$redis" >"$cgroup/cgroup.procs"
"$ctl" status --pid "$redis" | grep 'memory limit'
"$ctl" activate --pid "$redis" --capture-near-limit 90% --keep 8
"$ctl" dump --pid "$redis" --captured --follow --out-dir "$work/caps" >"$work/follow.out" 2>&1 &
follow=$!
redis-benchmark -p "$port" -q -n 2000000 -t set -d 2048 -r 100000000 -c 10 >/dev/null 2>&1 &
wait "$redis"
status=$?
redis=""
echo "redis-server ended: $( ((status > 128)) && kill -l $((status - 128)) || echo "exit $status"); \
OOM kills in the cgroup: $(awk '$1 == "oom_kill" {print $2}' "$cgroup/memory.oom_control")"
wait "$follow"
echo "dump --captured --follow: exit $?"
cat "$work/follow.out"
last=$(ls "$work/caps" | tail -n 1)
[ -n "$last" ] && "$ctl" report "$work/caps/$last" --top 5 2>/dev/null
