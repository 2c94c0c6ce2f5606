#!/usr/bin/env bash
# nginx throughput: unprofiled, memprof's sampler (the worker attached and
# activated at the default interval) and heaptrack -p on the worker,
# interleaved, on loopback.
#
#   ROUNDS=5 bash tests/bench/sampler_nginx.sh BUILD_DIR   (needs nginx-light, wrk, heaptrack)
#
# Debian's nginx (glibc malloc), one worker on CPU 0, gzip on for a 64 KiB
# text file (so that each request allocates: gzip's state and buffers); wrk
# on CPU 1, 2 threads, 50 connections, 5 s per case. The worker is the
# process attached: nginx clears its workers' environment, so their agent
# uses the default socket directory, and so does this script.
set -u
M="$(cd "${1:-build}" && pwd)/cli/memprofctl"
WORK="$(mktemp -d -t memprof-sampler-nginx.XXXXXX)"
trap 'pkill -f "nginx: master process nginx -p ${WORK}" 2>/dev/null; sleep 0.5; rm -rf "${WORK}"' EXIT
mkdir -p "${WORK}/html" "${WORK}/logs"
python3 -c "import random; random.seed(1); print(' '.join(random.choice(['alpha','beta','gamma','delta','epsilon']) for _ in range(11000)))" \
  > "${WORK}/html/index.txt"
cat > "${WORK}/nginx.conf" <<CONF
worker_processes 1;
daemon off;
error_log ${WORK}/logs/error.log;
pid ${WORK}/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  gzip on; gzip_min_length 0; gzip_types text/plain;
  server { listen 127.0.0.1:8470; root ${WORK}/html; default_type text/plain; }
}
CONF
# The worker's CPU time so far in ms (utime + stime, in clock ticks).
cpu_ms() { awk '{print ($14 + $15) * 1000 / '"$(getconf CLK_TCK)"'}' "/proc/$1/stat"; }
# bench: requests a second, the requests made, and the worker's (${W}) CPU ms
# per 1,000 of them: its cost per request, which machine load disturbs far
# less than throughput.
bench() {
  local before after out
  before=$(cpu_ms "${W}")
  out=$(taskset -c 1 wrk -t2 -c50 -d5s -H 'Accept-Encoding: gzip' http://127.0.0.1:8470/index.txt 2>&1)
  after=$(cpu_ms "${W}")
  local rps requests
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"${out}")
  requests=$(awk '/requests in/ {print $1}' <<<"${out}")
  echo "${rps} req/s, worker_cpu_ms_per_1000: $(awk -v ms=$((after - before)) -v n="${requests}" 'BEGIN {printf "%.1f", ms * 1000 / n}')"
}
# Starts nginx and waits until it answers (at most 10 s); prints the worker's pid.
start() {
  taskset -c 0 nginx -p "${WORK}" -c "${WORK}/nginx.conf" >/dev/null 2>&1 &
  local i
  for i in $(seq 100); do curl -sf -o /dev/null http://127.0.0.1:8470/index.txt && break; sleep 0.1; done
  pgrep -f "nginx: worker process" -P "$(cat "${WORK}/nginx.pid")"
}
stop() { kill "$(cat "${WORK}/nginx.pid")"; for i in $(seq 50); do [[ -e "${WORK}/nginx.pid" ]] || break; sleep 0.1; done; sleep 0.5; }
for round in $(seq "${ROUNDS:-5}"); do
  W=$(start); echo "round $round plain: $(bench)"; stop
  W=$(start)
  "$M" attach --pid "$W" >/dev/null && "$M" activate --pid "$W" >/dev/null ||
    { echo "round $round: attaching or activating the worker failed" >&2; exit 1; }
  echo "round $round memprof: $(bench)"; stop
  W=$(start)
  (cd "${WORK}" && heaptrack -p "$W" > "${WORK}/ht.$round.log" 2>&1 &)
  for i in $(seq 100); do grep -q "injecting\|heaptrack output will be written" "${WORK}/ht.$round.log" 2>/dev/null && break; sleep 0.1; done
  sleep 1; echo "round $round heaptrack: $(bench)"; stop
done
