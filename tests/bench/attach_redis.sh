#!/usr/bin/env bash
# `memprofctl attach` on a real Debian server started plain (no agent, no
# MALLOC_CONF): redis-server under continuous redis-benchmark load. Attaches
# ROUNDS fresh servers while the benchmark runs, printing each attach's pause
# (attach --json: pause_ms, the borrowed thread's first and second stop),
# then on the last one: stats, doctor and purge (each must succeed),
# activate (must be refused with exit 5: Debian's jemalloc runs without
# prof), and that every benchmark completed. Prints Markdown.
#
#   tests/bench/attach_redis.sh [BUILD_DIR] [ROUNDS]   (default 10 rounds)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
rounds=${2:-10}
ctl=$build/cli/memprofctl
port=16398
work=$(mktemp -d)
redis=""
bench=""
cleanup() {
  [ -z "$bench" ] || kill "$bench" 2>/dev/null || true
  [ -z "$redis" ] || kill "$redis" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export MEMPROF_SOCKET_DIR=$work/sockets
mkdir -m 0700 "$MEMPROF_SOCKET_DIR"

start_redis() {
  redis-server --port "$port" --save '' --appendonly no --logfile "$work/redis.log" &
  redis=$!
  for _ in $(seq 600); do redis-cli -p "$port" ping >/dev/null 2>&1 && return; sleep 0.05; done
  echo "attach_redis.sh: redis did not answer" >&2
  exit 1
}
# Load: SET then GET, 50 clients, 300,000 requests each (several seconds).
start_load() {
  redis-benchmark -p "$port" -q -n 300000 -t set,get -c 50 -r 100000 --csv \
    >"$work/bench.csv" 2>&1 &
  bench=$!
  sleep 1  # let the clients connect: the pause is measured under load
}
# The benchmark must complete (exit 0, both tests reported) and redis answer.
stop_load() {
  local status=0
  wait "$bench" || status=$?
  bench=""
  if [ "$status" != 0 ] || [ "$(grep -c '^"\(SET\|GET\)"' "$work/bench.csv")" != 2 ]; then
    echo "attach_redis.sh: the benchmark did not complete (exit $status):" >&2
    cat "$work/bench.csv" >&2
    exit 1
  fi
  redis-cli -p "$port" ping | grep -qx PONG || { echo "attach_redis.sh: redis stopped answering" >&2; exit 1; }
}

echo "| round | first stop (ms) | second stop (ms) |"
echo "|---|---|---|"
for round in $(seq "$rounds"); do
  start_redis
  start_load
  json=$("$ctl" attach --pid "$redis" --json)
  first=$(jq -r '.pause_ms[0]' <<<"$json")
  second=$(jq -r '.pause_ms[1]' <<<"$json")
  echo "| $round | $first | $second |"
  stop_load
  if [ "$round" != "$rounds" ]; then kill "$redis"; wait "$redis" || true; redis=""; fi
done

start_load
echo
for cmd in stats doctor purge; do
  "$ctl" "$cmd" --pid "$redis" >"$work/$cmd.out" 2>&1 || {
    echo "attach_redis.sh: $cmd failed:" >&2; cat "$work/$cmd.out" >&2; exit 1; }
  echo "- \`$cmd\`: exit 0, $(head -n 1 "$work/$cmd.out")"
done
set +e
"$ctl" activate --pid "$redis" >"$work/activate.out" 2>&1
code=$?
set -e
echo "- \`activate\`: exit $code, $(head -n 1 "$work/activate.out")"
[ "$code" = 5 ] || { echo "attach_redis.sh: activate was not refused with 5" >&2; exit 1; }
stop_load
echo "- redis-benchmark: every run completed ($(tr '\n' ' ' <"$work/bench.csv")); redis still answers"
