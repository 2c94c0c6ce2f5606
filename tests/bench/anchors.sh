#!/usr/bin/env bash
# Side-by-side benchmarks of memprof against the anchors of docs/contract.md section 5,
# each pair measured in the same run on the same machine:
#
#   stats     `memprofctl stats` vs `redis-cli MEMORY MALLOC-STATS`, both
#             against one redis-server (Debian's, linked with jemalloc) with
#             the agent preloaded; warm (gRPC server up) and cold (first
#             contact after the agent's idle shutdown).
#   dump      `memprofctl dump` vs the target's own mallctl("prof.dump") of the
#             same heap (many_stacks_target), plus memprofctl's peak RSS and
#             what the dump cost the target.
#   overhead  redis-benchmark against redis-server without the agent and with
#             it (idle, and with profiling active), runs interleaved.
#
#   tests/bench/anchors.sh [BUILD_DIR] [stats|dump|overhead|all]
#
# Needs hyperfine, redis-server, redis-tools and GNU time; prints Markdown.
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
what=${2:-all}
ctl=$build/cli/memprofctl
agent=$build/agent/libmemprof_agent.so
stacks_target=$build/tests/testprogs/many_stacks_target
readonly DUMP_STACKS=${MEMPROF_BENCH_STACKS:-100000}
readonly DUMP_PAD_FRAMES=${MEMPROF_BENCH_PAD_FRAMES:-64}
readonly REDIS_REQUESTS=${MEMPROF_BENCH_REDIS_REQUESTS:-300000}
readonly ROUNDS=3

for tool in hyperfine redis-server redis-cli redis-benchmark /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "anchors.sh: $tool is not installed" >&2; exit 1; }
done

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export MEMPROF_SOCKET_DIR=$work

wait_for() {  # description command...
  local what=$1; shift
  for _ in $(seq 600); do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; done
  echo "anchors.sh: timed out waiting for $what" >&2; return 1
}

# Starts redis-server on port $1 with extra environment $2..; sets $started.
started=""
start_redis() {  # port env...
  local port=$1; shift
  env "$@" redis-server --port "$port" --save '' --appendonly no --logfile "$work/redis-$port.log" &
  started=$!
  pids+=("$started")
  wait_for "redis on port $port" redis-cli -p "$port" ping
}

bench_stats() {
  echo "### stats: memprofctl vs redis-cli MEMORY MALLOC-STATS"
  local conf='MALLOC_CONF=prof:true,prof_active:false'
  start_redis 16391 "LD_PRELOAD=$agent" "$conf"; local warm=$started
  start_redis 16392 "LD_PRELOAD=$agent" "$conf" MEMPROF_IDLE_TIMEOUT=1s; local cold=$started
  redis-cli -p 16391 debug populate 200000 >/dev/null
  hyperfine -N --warmup 3 --runs 30 --export-markdown "$work/stats.md" \
    -n "memprofctl stats (table)" "$ctl stats --pid $warm" \
    -n "memprofctl stats --raw (full text)" "$ctl stats --raw --pid $warm" \
    -n "memprofctl stats --json (full JSON)" "$ctl stats --json --pid $warm" \
    -n "redis-cli MEMORY MALLOC-STATS" "redis-cli -p 16391 MEMORY MALLOC-STATS" >/dev/null
  hyperfine -N --runs 10 --prepare 'sleep 1.5' --export-markdown "$work/cold.md" \
    -n "memprofctl stats, cold (agent server torn down)" "$ctl stats --pid $cold" >/dev/null
  cat "$work/stats.md"; tail -n 1 "$work/cold.md"; echo
}

bench_dump() {
  echo "### dump: memprofctl dump vs the target's own prof.dump"
  mkfifo "$work/ready"
  MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 LD_PRELOAD=$agent MEMPROF_TEST_READY_FD=3 \
    "$stacks_target" --stacks "$DUMP_STACKS" --pad-frames "$DUMP_PAD_FRAMES" \
    --self-dump "$work/self.heap" 3>"$work/ready" 2>"$work/target.err" &
  local pid=$!
  pids+=("$pid")
  local line
  read -r -t 600 line <"$work/ready" || { cat "$work/target.err" >&2; return 1; }
  local rss_before
  rss_before=$(awk '/^VmRSS/{print $2}' /proc/"$pid"/status)
  hyperfine -N --warmup 1 --runs 5 --export-markdown "$work/dump.md" \
    -n "memprofctl dump" "$ctl dump --pid $pid --out $work/ctl.heap --force" >/dev/null
  /usr/bin/time -f '%M' -o "$work/ctl.rss" "$ctl" dump --pid "$pid" --out "$work/ctl.heap" --force
  local rss_after
  rss_after=$(awk '/^VmHWM/{print $2}' /proc/"$pid"/status)
  grep 'prof.dump wrote' "$work/target.err" | sed 's/^many_stacks_target: /anchor: /'
  printf 'memprofctl dump: %s bytes; memprofctl peak RSS %s MiB; target RSS %s MiB before, peak %s MiB\n\n' \
    "$(stat -c %s "$work/ctl.heap")" "$(($(cat "$work/ctl.rss") / 1024))" \
    "$((rss_before / 1024))" "$((rss_after / 1024))"
  cat "$work/dump.md"; echo
}

# Requests per second of one redis-benchmark run (SET and GET, pipelined).
redis_rps() {  # port
  redis-benchmark -p "$1" -q -n "$REDIS_REQUESTS" -t set,get -P 16 -r 100000 --csv |
    awk -F'"' 'NR > 1 {sum += $4; n++} END {printf "%.0f", sum / n}'
}

bench_overhead() {
  echo "### overhead: the same redis workload without and with the agent"
  start_redis 16393 MALLOC_CONF=prof:true,prof_active:false
  start_redis 16394 "LD_PRELOAD=$agent" MALLOC_CONF=prof:true,prof_active:false
  start_redis 16395 "LD_PRELOAD=$agent" MALLOC_CONF=prof:true,prof_active:false; local active=$started
  "$ctl" activate --pid "$active" >/dev/null
  echo "| round | without agent (req/s) | agent idle (req/s) | agent, profiling active (req/s) |"
  echo "|---|---|---|---|"
  for round in $(seq "$ROUNDS"); do
    echo "| $round | $(redis_rps 16393) | $(redis_rps 16394) | $(redis_rps 16395) |"
  done
  echo
}

case "$what" in
  stats) bench_stats ;;
  dump) bench_dump ;;
  overhead) bench_overhead ;;
  all) bench_stats; bench_dump; bench_overhead ;;
  *) echo "usage: anchors.sh [BUILD_DIR] [stats|dump|overhead|all]" >&2; exit 2 ;;
esac
