#!/usr/bin/env bash
# Redis throughput: unprofiled, memprof's sampler (attached, activated at the
# default interval) and heaptrack -p, interleaved, on loopback.
#
#   ROUNDS=5 bash tests/bench/sampler_redis.sh BUILD_DIR  (needs redis-server, redis-tools, heaptrack)
#
# ROUNDS rounds (default 5), each: a fresh redis-server unprofiled, one
# attached and activated (memprof's sampler at 512 KiB), one under
# `heaptrack -p`. The server runs on CPU 0 and redis-benchmark on CPU 1, so
# that the client does not take the server's core. Each line also gives the
# CPU time the server spent on the run (utime + stime from /proc/PID/stat,
# 10 ms ticks): what the sampler costs the host per request, which machine
# load disturbs far less than throughput.
set -u
M="${1:-build}/cli/memprofctl"
WORK="$(mktemp -d -t memprof-sampler-redis.XXXXXX)"
trap 'pkill -f "redis-server .*:64(00|01|02)" 2>/dev/null; rm -rf "${WORK}"' EXIT
export MEMPROF_SOCKET_DIR="${WORK}/sockets"
mkdir -m 0700 "${MEMPROF_SOCKET_DIR}"
# The server's CPU time so far in ms (utime + stime, clock ticks of 10 ms).
cpu_ms() { awk '{print ($14 + $15) * 1000 / '"$(getconf CLK_TCK)"'}' "/proc/$1/stat"; }
# bench PORT PID: requests a second for SET and GET, and the server's CPU ms.
bench() {
  local before after
  before=$(cpu_ms "$2")
  taskset -c 1 redis-benchmark -p "$1" -q -n 200000 -d 256 -t set,get -r 100000 -P 4 2>&1 | tr '\r' '\n' | grep "requests per second" | awk '{print $1, $2}' | tr '\n' ' '
  after=$(cpu_ms "$2")
  echo "server_cpu_ms: $((after - before))"
}
# Starts redis on port $1 and waits until it answers PING (at most 10 s).
start() {
  taskset -c 0 redis-server --port "$1" --save "" --appendonly no >/dev/null 2>&1 &
  local i
  for i in $(seq 100); do redis-cli -p "$1" ping >/dev/null 2>&1 && break; sleep 0.1; done
  pgrep -f "redis-server .*:$1"
}
for round in $(seq "${ROUNDS:-5}"); do
  P=$(start 6400); echo "round $round plain: $(bench 6400 $P)"; kill $P; sleep 0.5
  P=$(start 6401); $M attach --pid $P >/dev/null && $M activate --pid $P >/dev/null; echo "round $round memprof: $(bench 6401 $P)"; kill $P; sleep 0.5
  P=$(start 6402); # heaptrack -p writes its trace into the working directory: ours, removed at exit.
  (cd "${WORK}" && heaptrack -p $P > "${WORK}/ht.$round.log" 2>&1 &)
  for i in $(seq 100); do grep -q "injecting\|heaptrack output will be written" "${WORK}/ht.$round.log" 2>/dev/null && break; sleep 0.1; done
  sleep 1; echo "round $round heaptrack: $(bench 6402 $P)"; kill $P; sleep 1.5
done
