#!/usr/bin/env bash
# Collecting from many local targets: one multi-target memprofctl run
# (--all --parallel N) against the same work done as one memprofctl run per
# target, one after the other (the anchor: what a script did before
# multi-target runs). Side by side, on the same targets, in one run.
#
# Starts TARGETS (default 64) plain_target processes with the agent
# preloaded and profiling active, in a private socket directory, then times
# with hyperfine:
#   dump:  `dump --all --parallel N --out-dir D`  vs  TARGETS x `dump --pid P --out-dir D`
#   stats: `stats --all --parallel N --json`      vs  TARGETS x `stats --pid P --json`
# and checks that every run wrote TARGETS verified profiles.
#
#   tests/bench/fleet_collect.sh [BUILD_DIR]
#
# MEMPROF_BENCH_TARGETS, MEMPROF_BENCH_PARALLEL and MEMPROF_BENCH_RUNS
# change the defaults (64, 8, 5). Needs hyperfine and jq. Prints Markdown.
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
readonly ctl=$build/cli/memprofctl
readonly agent=$build/agent/libmemprof_agent.so
readonly target=$build/tests/testprogs/plain_target
readonly TARGETS=${MEMPROF_BENCH_TARGETS:-64}
readonly PARALLEL=${MEMPROF_BENCH_PARALLEL:-8}
readonly RUNS=${MEMPROF_BENCH_RUNS:-5}
readonly READY_SECONDS=60

for tool in hyperfine jq; do
  command -v "$tool" >/dev/null || { echo "fleet_collect.sh: $tool is not installed" >&2; exit 1; }
done

work=$(mktemp -d /tmp/memprof-fleet-bench.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

export MEMPROF_SOCKET_DIR=$work/sockets
mkdir -m 700 "$MEMPROF_SOCKET_DIR" "$work/out"

for _ in $(seq "$TARGETS"); do
  LD_PRELOAD=$agent MALLOC_CONF=prof:true,prof_active:true "$target" >/dev/null 2>&1 &
  pids+=("$!")
done

# Ready: every target's socket exists, within a deadline.
deadline=$((SECONDS + READY_SECONDS))
for pid in "${pids[@]}"; do
  until [ -S "$MEMPROF_SOCKET_DIR/$pid.sock" ]; do
    if ((SECONDS > deadline)); then echo "fleet_collect.sh: pid $pid has no socket after ${READY_SECONDS}s" >&2; exit 1; fi
    kill -0 "$pid" || { echo "fleet_collect.sh: pid $pid died" >&2; exit 1; }
    sleep 0.05
  done
done
echo "$TARGETS targets ready: ${pids[*]:0:3} ..." >&2

# Check once, outside the timings, that both ways collect everything.
"$ctl" dump --all --parallel "$PARALLEL" --out-dir "$work/out" --json > "$work/check.jsonl"
ok=$(jq -s 'map(select(.ok)) | length' "$work/check.jsonl")
[ "$ok" -eq "$TARGETS" ] || { echo "fleet_collect.sh: only $ok of $TARGETS dumps succeeded" >&2; exit 1; }
rm -f "$work/out"/*

printf '%s\n' "${pids[@]}" > "$work/pids"
seq_dump="while read -r p; do $ctl dump --pid \$p --out-dir $work/out >/dev/null 2>&1 || exit 1; done < $work/pids"
seq_stats="while read -r p; do $ctl stats --pid \$p --json >/dev/null || exit 1; done < $work/pids"

hyperfine --style basic --runs "$RUNS" --warmup 1 --export-markdown "$work/dump.md" \
  --prepare "rm -f $work/out/*" \
  -n "dump --all --parallel $PARALLEL" "$ctl dump --all --parallel $PARALLEL --out-dir $work/out" \
  -n "$TARGETS x dump --pid P" "bash -c '$seq_dump'" >&2
hyperfine --style basic --runs "$RUNS" --warmup 1 --export-markdown "$work/stats.md" \
  -n "stats --all --parallel $PARALLEL --json" "$ctl stats --all --parallel $PARALLEL --json" \
  -n "$TARGETS x stats --pid P --json" "bash -c '$seq_stats'" >&2

echo "### $TARGETS local targets, --parallel $PARALLEL ($(nproc) cores)"
echo
cat "$work/dump.md"
echo
cat "$work/stats.md"
