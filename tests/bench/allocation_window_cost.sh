#!/usr/bin/env bash
# What an allocation window (`memprofctl profile --allocations`) costs a busy
# service: Debian's redis-server with the agent preloaded and profiling
# active, under redis-benchmark (SET and GET of 256-byte values, 50 clients, pipelined 16 deep),
# without and with a window open, interleaved ROUNDS times, at jemalloc's
# default sample interval (512 KiB) and at a small one (4 KiB). Prints the
# median requests per second of each, the records a window kept, the memory
# jemalloc's records took (stats.metadata during the window minus before,
# per record) and the profile's size per record, as the agent holds it
# (gzip'd) and as text.
#
#   tests/bench/allocation_window_cost.sh [BUILD_DIR] [ROUNDS] [REQUESTS]
#   (defaults: build, 5 rounds, 200000 requests per benchmark run)
set -uo pipefail
build=$(cd "${1:-build}" && pwd)
rounds=${2:-5}
requests=${3:-200000}
ctl=$build/cli/memprofctl
port=16402
work=$(mktemp -d)
export MEMPROF_SOCKET_DIR=$work/sockets
mkdir -m 0700 "$MEMPROF_SOCKET_DIR"
redis=""
window=""
cleanup() {
  [ -z "$window" ] || kill "$window" 2>/dev/null
  [ -z "$redis" ] || kill "$redis" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

start_redis() {  # LG_PROF_SAMPLE
  (cd "$work" && exec env LD_PRELOAD="$build/agent/libmemprof_agent.so" \
    MALLOC_CONF="prof:true,prof_active:true,lg_prof_sample:$1" \
    redis-server --port "$port" --save '' --appendonly no --logfile "$work/redis.log") &
  redis=$!
  for _ in $(seq 200); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
}

stop_redis() { kill "$redis"; wait "$redis" 2>/dev/null; redis=""; }

rps() {  # the mean requests per second of SET and GET
  redis-benchmark -p "$port" -q -n "$requests" -t set,get -d 256 -r 100000 -c 50 -P 16 --csv 2>/dev/null |
    awk -F'"' 'NR > 1 {s += $4; n++} END {printf "%.0f\n", s / n}'
}

metadata() { "$ctl" stats --pid "$redis" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"])'; }

# Opens a window in the background and waits for the agent's window thread.
open_window() {
  "$ctl" profile --pid "$redis" --duration 1h --allocations --out "$work/w.allocs" --force \
    --json >"$work/w.json" 2>"$work/w.err" &
  window=$!
  for _ in $(seq 400); do
    grep -qx memprof-allocs /proc/"$redis"/task/*/comm 2>/dev/null && return 0
    sleep 0.01
  done
  echo "the window did not open: $(cat "$work/w.err")" >&2
  return 1
}

close_window() {
  kill -INT "$window"; wait "$window"; window=""
}

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

measure() {  # LG_PROF_SAMPLE NAME
  start_redis "$1"
  rps >/dev/null  # warm-up: the keys exist, the heap has grown
  : >"$work/base"; : >"$work/open"
  for _ in $(seq "$rounds"); do
    rps >>"$work/base"
    open_window || return 1
    before=$(metadata)
    rps >>"$work/open"
    during=$(metadata)
    close_window
    records=$(zcat "$work/w.allocs" | sed -n '/^--- recent allocations$/{n;p;}' | grep -o '"usize":' | wc -l)
    text=$(zcat "$work/w.allocs" | wc -c)
    size=$(stat -c %s "$work/w.allocs")
    ended=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ended_by"])' "$work/w.json")
  done
  b=$(median <"$work/base"); o=$(median <"$work/open")
  echo "$2: no window $b req/s, window open $o req/s ($(awk -v b="$b" -v o="$o" 'BEGIN {printf "%+.1f%%", (o - b) * 100 / b}'))"
  echo "  last window: $records records (ended by $ended), jemalloc metadata +$((during - before)) B" \
    "($(( records > 0 ? (during - before) / records : 0 )) B/record), profile $size B gzip'd" \
    "($(( records > 0 ? size / records : 0 )) B/record; $text B as text)"
  stop_redis
}

echo "redis-server $(redis-server --version | grep -o 'v=[0-9.]*'), $rounds rounds of $requests requests, medians"
measure 19 "sample interval 512 KiB (default)"
measure 12 "sample interval 4 KiB"
