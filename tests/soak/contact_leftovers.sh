#!/usr/bin/env bash
# What a contact leaves in a real jemalloc server with background threads:
# Debian's redis-server (which turns jemalloc's background_thread on) with
# the agent preloaded, its threads by name and jemalloc's arenas with their
# bound threads, before any contact, during one (`stats`, `dump`,
# `profile --duration 1s`, an allocation window), and after the agent's idle
# timeout (set to 2 s here). Not in CI: it measures, it does not judge
# (docs/architecture.md, "Known limits").
#
#   tests/soak/contact_leftovers.sh [BUILD_DIR]
set -uo pipefail
build=$(cd "${1:-build}" && pwd)
ctl=$build/cli/memprofctl
port=16401
work=$(mktemp -d)
export MEMPROF_SOCKET_DIR=$work/sockets
mkdir -m 0700 "$MEMPROF_SOCKET_DIR"
redis=""
cleanup() {
  [ -z "$redis" ] || kill -9 "$redis" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

show() {
  local threads
  threads=$(for t in /proc/"$redis"/task/*; do cat "$t/comm" 2>/dev/null; done | sort | uniq -c | awk '{printf "%s×%s ", $2, $1}')
  echo "$1: $(find /proc/"$redis"/task -mindepth 1 -maxdepth 1 | wc -l) threads: $threads"
  echo "  arenas (index: bound threads): $(redis-cli -p "$port" memory malloc-stats |
    awk '/^arenas\[[0-9]+\]:/ {a = $1} /assigned threads:/ {if (a != "") print a, $3; a = ""}' |
    tr '\n' ' ')"
}

LD_PRELOAD=$build/agent/libmemprof_agent.so MEMPROF_IDLE_TIMEOUT=2s \
  MALLOC_CONF=prof:true,prof_active:false \
  redis-server --port "$port" --save '' --appendonly no >"$work/redis.log" 2>&1 &
redis=$!
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
redis-cli -p "$port" debug populate 20000 >/dev/null
show "before any contact"
"$ctl" stats --pid "$redis" >/dev/null
"$ctl" dump --pid "$redis" --out "$work/now.heap" >/dev/null
"$ctl" profile --pid "$redis" --duration 1s --out "$work/window.heap" >/dev/null
"$ctl" profile --allocations --pid "$redis" --duration 1s --out "$work/allocs.allocs" >/dev/null
show "during the contact"
for _ in $(seq 100); do
  [ "$(for t in /proc/"$redis"/task/*; do cat "$t/comm" 2>/dev/null; done | grep -c '^memprof-[a-z_]*$')" -le 1 ] && break
  sleep 0.1
done
show "after the idle timeout"
