#!/usr/bin/env python3
"""Soak: a real redis-server with the agent under continuous load.

Run through `bash dev.sh soak [SECONDS]`, which installs redis and builds
memprofctl and the agent first. Alone:

  python3 tests/soak/soak.py --build-dir build --seconds 600

For SECONDS, against one redis-server started with the agent preloaded and
profiling enabled (MALLOC_CONF=prof:true,prof_active:false), while
redis-benchmark loads it:

  * `dump` every few seconds, each checked with `report` (exit 0);
  * `stats --json` every second;
  * a `profile` window every minute, its file checked with `report`;
  * peak capture armed (`activate --capture-growth`);
  * `BGSAVE` every ~30 s: redis forks a child that gets an agent of its own,
    whose socket must be gone once the child exits;
  * a `memprofctl exporter` on a loopback port, scraped for /metrics and
    /debug/pprof/heap?pid=P.

Every command and every failure is counted. At the end the load stops, redis
is emptied, and once the agent is idle again the target's threads and
descriptors (its own table and the agent's private one) must equal their idle
values before the load (plus one memfd per peak capture the agent holds, by
design), and jemalloc's allocated bytes and the RSS must be within the bounds
below. A summary table is printed; the exit status is 1 on any failure.

Everything it starts is stopped, and its temp directory removed, also on
Ctrl-C, SIGTERM or an error.
"""

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

# Bounds of the comparison before/after (the claim the soak makes). The
# agent's own allocations go through the host's jemalloc; after the load,
# FLUSHALL and a purge, jemalloc's allocated bytes are within this of where
# they were before it; RSS, which also holds the pages jemalloc keeps
# for reuse (and the module's code, mapped before either measurement), within
# the second.
ALLOCATED_BOUND_BYTES = 4 << 20
RSS_BOUND_KB = 32 << 10

DUMP_EVERY_S = 5
STATS_EVERY_S = 1
PROFILE_EVERY_S = 60
PROFILE_WINDOW = "10s"
BGSAVE_EVERY_S = 30
METRICS_EVERY_S = 5
PPROF_EVERY_S = 20
CAPTURE_GROWTH = "16MiB"
CAPTURE_KEEP = 4
# The agent stops gRPC after this long without a call; short, so that the
# end state is reached quickly. Between the soak's calls it stays up.
IDLE_TIMEOUT = "2s"
# Redis holds at most this much data: the heap grows to it, then churns
# (evictions) for the rest of the run.
REDIS_MAXMEMORY = "96mb"
COMMAND_TIMEOUT_S = 120
READY_TIMEOUT_S = 30
IDLE_WAIT_S = 120


def log(msg):
    print(f"[soak {time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Tally:
    """Counts of each command and its failures (thread-safe)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.runs = {}
        self.failures = {}
        self.first_errors = []

    def record(self, name, ok, detail=""):
        with self._lock:
            self.runs[name] = self.runs.get(name, 0) + 1
            if not ok:
                self.failures[name] = self.failures.get(name, 0) + 1
                if len(self.first_errors) < 20:
                    self.first_errors.append(f"{name}: {detail.strip()[-600:]}")
        if not ok:
            log(f"FAILED {name}: {detail.strip()[-600:]}")
        return ok

    def total_failures(self):
        with self._lock:
            return sum(self.failures.values())


class ForkGate:
    """Keeps BGSAVE's fork() away from dumps in flight.

    A fork() while a client uses the agent stops its gRPC just before the
    fork and starts it again after; a call in flight is cancelled (unary
    calls are retried by memprofctl, a dump that has started streaming fails
    and can be run again: docs/user-guide.md, "Worker processes"). Dumps hold
    the gate shared, BGSAVE exclusively."""

    def __init__(self):
        self._cv = threading.Condition()
        self._readers = 0
        self._writer = False

    @contextlib.contextmanager
    def shared(self):
        with self._cv:
            self._cv.wait_for(lambda: not self._writer)
            self._readers += 1
        try:
            yield
        finally:
            with self._cv:
                self._readers -= 1
                self._cv.notify_all()

    @contextlib.contextmanager
    def exclusive(self):
        with self._cv:
            self._cv.wait_for(lambda: not self._writer)
            self._writer = True
            self._cv.wait_for(lambda: self._readers == 0)
        try:
            yield
        finally:
            with self._cv:
                self._writer = False
                self._cv.notify_all()


def read_status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def count_dir(path):
    try:
        return len(os.listdir(path))
    except OSError:
        return -1


def agent_accept_tid(pid):
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().strip() == "memprof-accept":
                    return tid
        except OSError:
            pass
    return None


def count_memfds(fd_dir, prefix="/memfd:memprof-"):
    n = 0
    try:
        for entry in os.listdir(fd_dir):
            with contextlib.suppress(OSError):
                if os.readlink(f"{fd_dir}/{entry}").startswith(prefix):
                    n += 1
    except OSError:
        return -1
    return n


class Gauges:
    def __init__(self, pid, allocated):
        status = read_status(pid)
        self.threads = int(status["Threads"])
        self.rss_kb = int(status["VmRSS"].split()[0])
        self.fds = count_dir(f"/proc/{pid}/fd")
        tid = agent_accept_tid(pid)
        agent_fd_dir = f"/proc/{pid}/task/{tid}/fd" if tid else None
        # The accept thread's private table (docs/architecture.md,
        # "Descriptors"); the same as the main table if unshare was refused.
        self.agent_fds = count_dir(agent_fd_dir) if agent_fd_dir else -1
        self.agent_memfds = count_memfds(agent_fd_dir) if agent_fd_dir else -1
        # The agent's threads are named memprof-*; jemalloc's background
        # threads (redis enables them) jemalloc_bg_thd: jemalloc starts one
        # per arena in use, up to its limit, and keeps it, so a thread of the
        # agent's that allocates in an arena no host thread used leaves one.
        self.agent_threads = 0
        self.jemalloc_threads = 0
        for t in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{t}/comm") as f:
                comm = f.read().strip()
                self.agent_threads += comm.startswith("memprof-")
                self.jemalloc_threads += comm == "jemalloc_bg_thd"
        self.allocated = allocated

    def brief(self):
        return (f"threads {self.threads} (agent {self.agent_threads}, jemalloc "
                f"{self.jemalloc_threads}), fds {self.fds}, "
                f"agent fds {self.agent_fds} ({self.agent_memfds} memfds), RSS {self.rss_kb} kB, "
                f"allocated {self.allocated} B")


class Soak:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build_dir)
        self.memprofctl = f"{self.build}/cli/memprofctl"
        self.agent = f"{self.build}/agent/libmemprof_agent.so"
        self.tally = Tally()
        self.gate = ForkGate()
        self.stop = threading.Event()
        self.procs = []  # everything started, stopped in reverse on cleanup
        self.tmp = tempfile.mkdtemp(prefix="memprof-soak.")
        self.sock_dir = f"{self.tmp}/sockets"
        os.mkdir(self.sock_dir, 0o700)
        self.dump_dir = f"{self.tmp}/dumps"
        os.mkdir(self.dump_dir, 0o700)
        self.redis_dir = f"{self.tmp}/redis"
        os.mkdir(self.redis_dir, 0o700)
        self.port = free_port()
        self.redis = None
        self.pid = None
        self.exporter_url = None
        self.bgsave_children = set()
        self.leftover_child_sockets = []
        self.seq = 0
        self.seq_lock = threading.Lock()

    # --- processes -----------------------------------------------------------

    def env(self, **extra):
        env = dict(os.environ)
        env["MEMPROF_SOCKET_DIR"] = self.sock_dir
        env.update(extra)
        return env

    def spawn(self, argv, log_name, **kwargs):
        out = open(f"{self.tmp}/{log_name}.log", "wb")
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, **kwargs)
        out.close()
        self.procs.append(p)
        return p

    def cleanup(self):
        # A second Ctrl-C must not cut the cleanup short.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        self.stop.set()
        for p in reversed(self.procs):
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
        if self.args.keep_temp:
            log(f"kept {self.tmp}")
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def redis_cli(self, *cmd, timeout=30):
        r = subprocess.run(["redis-cli", "-p", str(self.port), *cmd], capture_output=True,
                           text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        return r.returncode, r.stdout.strip(), r.stderr.strip()

    def redis_info(self, section):
        rc, out, _ = self.redis_cli("INFO", section)
        if rc != 0:
            return {}
        return dict(line.split(":", 1) for line in out.splitlines() if ":" in line)

    def allocated(self):
        return int(self.redis_info("memory").get("allocator_allocated", "-1"))

    def settled_gauges(self):
        """The gauges once redis has closed the connections of the soak's own
        redis-cli calls (it does so when it reads their end, a moment after
        redis-cli exits): the same descriptor count twice, 0.5 s apart."""
        allocated = self.allocated()
        last = Gauges(self.pid, allocated)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            time.sleep(0.5)
            now = Gauges(self.pid, allocated)
            if (now.fds, now.agent_fds, now.threads) == (last.fds, last.agent_fds, last.threads):
                return now
            last = now
        return last

    def start_redis(self):
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", self.redis_dir,
                "--dbfilename", "soak.rdb", "--daemonize", "no", "--protected-mode", "yes",
                "--maxmemory", REDIS_MAXMEMORY, "--maxmemory-policy", "allkeys-random"]
        env = self.env(LD_PRELOAD=self.agent, MALLOC_CONF="prof:true,prof_active:false",
                       MEMPROF_IDLE_TIMEOUT=IDLE_TIMEOUT, MEMPROF_LOG_LEVEL="warn")
        self.redis = self.spawn(argv, "redis", env=env)
        self.pid = self.redis.pid
        sock = f"{self.sock_dir}/{self.pid}.sock"
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.redis.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.redis.returncode}; "
                                   f"see {self.tmp}/redis.log")
            if os.path.exists(sock) and self.redis_cli("PING", timeout=5)[1] == "PONG":
                return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server (pid {self.pid}) did not answer and publish "
                           f"{sock} within {READY_TIMEOUT_S}s")

    # --- memprofctl ------------------------------------------------------------

    def ctl(self, name, *argv, check=None, timeout=COMMAND_TIMEOUT_S):
        """Runs memprofctl ARGV, counted under NAME; True on success."""
        try:
            r = subprocess.run([self.memprofctl, *argv], capture_output=True, text=True,
                               env=self.env(), timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return self.tally.record(name, False, f"no answer within {timeout}s: {argv}")
        ok = r.returncode == 0
        detail = f"exit {r.returncode}: {r.stderr}"
        if ok and check is not None:
            problem = check(r.stdout)
            ok, detail = problem is None, problem or ""
        self.tally.record(name, ok, detail)
        return ok

    def next_name(self, stem):
        with self.seq_lock:
            self.seq += 1
            return f"{self.dump_dir}/{stem}-{self.seq}.heap"

    def report(self, path):
        ok = self.ctl("report", "report", path, "--top", "5", timeout=300)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return ok

    # --- the load and the loops ----------------------------------------------

    def every(self, period, body):
        """Runs body() every `period` seconds until stopped."""
        def loop():
            next_run = time.monotonic()
            while not self.stop.is_set():
                try:
                    body()
                except Exception as e:  # a bug in the soak itself is a failure too
                    self.tally.record("soak-internal", False, repr(e))
                next_run += period
                self.stop.wait(max(0.0, next_run - time.monotonic()))
        t = threading.Thread(target=loop, daemon=True)
        t.start()
        return t

    def do_dump(self):
        path = self.next_name("dump")
        with self.gate.shared():
            ok = self.ctl("dump", "dump", "--pid", str(self.pid), "--out", path, "--force")
        if ok:
            self.report(path)

    def do_stats(self):
        def check(out):
            try:
                doc = json.loads(out)
            except ValueError as e:
                return f"not JSON: {e}"
            return None if isinstance(doc, dict) else "not a JSON object"
        self.ctl("stats", "stats", "--pid", str(self.pid), "--json", check=check)

    def do_profile(self):
        path = self.next_name("profile")
        with self.gate.shared():
            ok = self.ctl("profile", "profile", "--pid", str(self.pid), "--duration",
                          PROFILE_WINDOW, "--out", path)
        if ok:
            self.report(path)

    def do_bgsave(self):
        with self.gate.exclusive():
            before = set(children_of(self.pid))
            rc, out, err = self.redis_cli("BGSAVE")
            ok = rc == 0 and "started" in out
            self.tally.record("bgsave", ok, f"{out} {err}")
            if not ok:
                return
            child = None
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                new = set(children_of(self.pid)) - before
                if new and child is None:
                    child = min(new)
                    self.bgsave_children.add(child)
                if self.redis_info("persistence").get("rdb_bgsave_in_progress") == "0":
                    break
                time.sleep(0.05)
            else:
                self.tally.record("bgsave-finished", False, "still saving after 300s")
                return
            status = self.redis_info("persistence").get("rdb_last_bgsave_status")
            self.tally.record("bgsave-finished", status == "ok", f"rdb_last_bgsave_status {status}")
        if child is not None:
            self.check_child_socket_gone(child)

    def check_child_socket_gone(self, child):
        sock = f"{self.sock_dir}/{child}.sock"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if not os.path.exists(sock) and not os.path.exists(f"/proc/{child}"):
                self.tally.record("bgsave-child-socket-gone", True)
                return
            time.sleep(0.05)
        self.leftover_child_sockets.append(sock)
        self.tally.record("bgsave-child-socket-gone", False,
                          f"{sock} still there 10s after BGSAVE ended")

    def start_exporter(self):
        p = self.spawn([self.memprofctl, "exporter", "--listen", "127.0.0.1:0",
                        "--target-timeout", "30s"], "exporter", env=self.env())
        deadline = time.monotonic() + READY_TIMEOUT_S
        pattern = re.compile(r"http://(127\.0\.0\.1:\d+)")
        while time.monotonic() < deadline:
            with open(f"{self.tmp}/exporter.log") as f:
                m = pattern.search(f.read())
            if m:
                self.exporter_url = f"http://{m.group(1)}"
                return p
            if p.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"memprofctl exporter did not say its address; see {self.tmp}/exporter.log")

    def http_get(self, name, path, check):
        try:
            with urllib.request.urlopen(self.exporter_url + path, timeout=COMMAND_TIMEOUT_S) as r:
                body = r.read()
                problem = check(r.status, body)
        except Exception as e:  # HTTP errors, refused, timeouts: all failures
            problem = repr(e)
        self.tally.record(name, problem is None, problem or "")

    def do_metrics(self):
        up = f'memprof_up{{pid="{self.pid}"'
        def check(status, body):
            text = body.decode(errors="replace")
            for line in text.splitlines():
                if line.startswith(up):
                    return None if line.rstrip().endswith(" 1") else f"target down: {line}"
            return f"no {up} line in /metrics"
        self.http_get("exporter-metrics", "/metrics", check)

    def do_pprof(self):
        def check(status, body):
            # gzipped profile.proto
            return None if status == 200 and body[:2] == b"\x1f\x8b" else f"HTTP {status}"
        with self.gate.shared():
            self.http_get("exporter-pprof", f"/debug/pprof/heap?pid={self.pid}", check)

    def load(self):
        # SET/GET on random keys (the heap grows to maxmemory, then churns
        # with evictions), LPUSH, all pipelined.
        argv = ["redis-benchmark", "-p", str(self.port), "-q", "-l", "-t", "set,get,lpush",
                "-d", "512", "-r", "1000000", "-P", "16", "-c", "8"]
        return self.spawn(["nice", "-n", "5", *argv], "benchmark")

    # --- the comparison ---------------------------------------------------------

    def wait_idle(self, want_agent_threads):
        """Waits for the agent's gRPC to stop: its threads back to
        `want_agent_threads` (the accept thread alone), twice 1 s apart."""
        deadline = time.monotonic() + IDLE_WAIT_S
        while time.monotonic() < deadline:
            if Gauges(self.pid, 0).agent_threads <= want_agent_threads:
                time.sleep(1)
                if Gauges(self.pid, 0).agent_threads <= want_agent_threads:
                    return True
            time.sleep(0.2)
        return False

    def quiesce(self):
        """Empties redis and gives jemalloc's free pages back (redis-cli only,
        not the agent: the measurement must not wake it)."""
        self.redis_cli("FLUSHALL", "SYNC")
        self.redis_cli("MEMORY", "PURGE")

    def held_captures(self):
        r = subprocess.run([self.memprofctl, "status", "--pid", str(self.pid), "--json"],
                           capture_output=True, text=True, env=self.env(), timeout=60)
        self.tally.record("status", r.returncode == 0, r.stderr)
        return len(json.loads(r.stdout)["capture"]["held"]) if r.returncode == 0 else 0

    def run(self):
        started = time.time()
        # The commit the binaries were built from, as the run starts (the
        # tree may move on during an hour's run).
        self.commit = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)),
                                      "describe", "--always", "--dirty"], capture_output=True,
                                     text=True).stdout.strip()
        self.start_redis()
        log(f"redis-server pid {self.pid} on port {self.port}, sockets in {self.sock_dir}")
        self.quiesce()
        never = self.settled_gauges()
        log(f"never connected: {never.brief()}")
        # The first call loads the agent's module; idle again after it is the
        # state the soak must come back to.
        self.ctl("status", "status", "--pid", str(self.pid))
        if not self.wait_idle(never.agent_threads):
            raise RuntimeError("the agent did not go idle after its first call")
        self.quiesce()
        before = self.settled_gauges()
        log(f"idle before the load: {before.brief()}")

        self.ctl("activate", "activate", "--pid", str(self.pid), "--capture-growth",
                 CAPTURE_GROWTH, "--keep", str(CAPTURE_KEEP))
        exporter = self.start_exporter()
        bench = self.load()
        log(f"load and clients running for {self.args.seconds}s "
            f"(exporter {self.exporter_url})")
        loops = [self.every(STATS_EVERY_S, self.do_stats),
                 self.every(DUMP_EVERY_S, self.do_dump),
                 self.every(PROFILE_EVERY_S, self.do_profile),
                 self.every(BGSAVE_EVERY_S, self.do_bgsave),
                 self.every(METRICS_EVERY_S, self.do_metrics),
                 self.every(PPROF_EVERY_S, self.do_pprof)]
        end = time.monotonic() + self.args.seconds
        next_note = time.monotonic() + 60
        while time.monotonic() < end:
            if self.redis.poll() is not None:
                self.tally.record("target-alive", False, f"redis exited {self.redis.returncode}")
                break
            if bench.poll() is not None:
                self.tally.record("benchmark-alive", False, f"exited {bench.returncode}")
                bench = self.load()
            if time.monotonic() >= next_note:
                g = Gauges(self.pid, self.allocated())
                log(f"{int(end - time.monotonic())}s left; {g.brief()}; "
                    f"{self.tally.total_failures()} failures")
                next_note += 60
            time.sleep(0.5)

        log("stopping the clients")
        self.stop.set()
        for t in loops:
            t.join(COMMAND_TIMEOUT_S * 3)
        os.killpg(bench.pid, signal.SIGTERM)
        bench.wait(30)
        os.killpg(exporter.pid, signal.SIGTERM)
        self.tally.record("exporter-exit", exporter.wait(30) == 0,
                          f"exporter exited {exporter.returncode}")
        captures_dir = f"{self.tmp}/captures"
        os.mkdir(captures_dir)
        self.ctl("dump-captured", "dump", "--pid", str(self.pid), "--captured", "--out-dir",
                 captures_dir)
        for name in sorted(os.listdir(captures_dir)):
            self.report(f"{captures_dir}/{name}")
        self.ctl("deactivate", "deactivate", "--pid", str(self.pid))
        held = self.held_captures()
        self.tally.record("target-alive", self.redis.poll() is None, "redis-server is gone")
        self.quiesce()
        idle = self.wait_idle(before.agent_threads)
        self.tally.record("agent-idle", idle, f"agent threads not back to {before.agent_threads} "
                          f"within {IDLE_WAIT_S}s")
        after = self.settled_gauges()
        log(f"idle after the load:  {after.brief()}")
        for child in sorted(self.bgsave_children):
            if os.path.exists(f"{self.sock_dir}/{child}.sock"):
                self.leftover_child_sockets.append(f"{self.sock_dir}/{child}.sock")
        stray = sorted(n for n in os.listdir(self.sock_dir) if n != f"{self.pid}.sock")
        self.tally.record("socket-dir-clean", not stray, f"left in the socket dir: {stray}")
        checks = self.compare(before, after, held)
        self.summary(started, never, before, after, held, checks)
        return 0 if self.tally.total_failures() == 0 else 1

    def compare(self, before, after, held):
        rows = [
            ("threads", before.threads, after.threads,
             after.threads - after.jemalloc_threads == before.threads - before.jemalloc_threads,
             "equal, but for jemalloc_bg_thd"),
            ("agent threads", before.agent_threads, after.agent_threads,
             after.agent_threads == before.agent_threads, "equal"),
            ("jemalloc_bg_thd threads", before.jemalloc_threads, after.jemalloc_threads, True,
             "reported (jemalloc's, one per arena used)"),
            ("descriptors (/proc/P/fd)", before.fds, after.fds, after.fds == before.fds, "equal"),
            ("agent descriptors", before.agent_fds, after.agent_fds,
             after.agent_fds == before.agent_fds + held, f"equal + {held} held captures"),
            ("agent memfds", before.agent_memfds, after.agent_memfds,
             after.agent_memfds == before.agent_memfds + held, f"equal + {held} held captures"),
            ("jemalloc allocated (B)", before.allocated, after.allocated,
             after.allocated - before.allocated <= ALLOCATED_BOUND_BYTES,
             f"+ at most {ALLOCATED_BOUND_BYTES >> 20} MiB"),
            ("RSS (kB)", before.rss_kb, after.rss_kb, after.rss_kb - before.rss_kb <= RSS_BOUND_KB,
             f"+ at most {RSS_BOUND_KB >> 10} MiB"),
        ]
        for name, _, _, ok, bound in rows:
            self.tally.record(f"compare {name}", ok, f"outside its bound ({bound})")
        return rows

    def summary(self, started, never, before, after, held, checks):
        commit = self.commit
        print()
        print(f"soak summary: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}, "
              f"commit {commit}, {self.args.seconds}s of load, "
              f"{int(time.time() - started)}s in all")
        print(f"redis: {subprocess.run(['redis-server', '--version'], capture_output=True, text=True).stdout.strip()}")
        print()
        print(f"{'command':<28} {'runs':>8} {'failures':>9}")
        for name in sorted(self.tally.runs):
            if name.startswith("compare "):
                continue
            print(f"{name:<28} {self.tally.runs[name]:>8} {self.tally.failures.get(name, 0):>9}")
        print()
        print(f"never connected: {never.brief()}")
        print(f"{'gauge':<28} {'before':>12} {'after':>12}  bound")
        for name, b, a, ok, bound in checks:
            print(f"{name:<28} {b:>12} {a:>12}  {bound}{'' if ok else '  FAILED'}")
        print(f"BGSAVE children: {len(self.bgsave_children)}, sockets left by them: "
              f"{len(self.leftover_child_sockets)}; captures held at the end: {held}")
        failures = self.tally.total_failures()
        print(f"failures: {failures}")
        for e in self.tally.first_errors:
            print(f"  {e}")


def children_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--seconds", type=int, default=3600)
    parser.add_argument("--keep-temp", action="store_true", help="keep the temp directory")
    args = parser.parse_args()
    if args.seconds < 1:
        parser.error("--seconds must be at least 1")
    for tool in ("redis-server", "redis-cli", "redis-benchmark"):
        if shutil.which(tool) is None:
            sys.exit(f"soak: {tool} not found (apt-get install redis-server redis-tools)")
    soak = Soak(args)

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)
    # SIGINT too: a shell that starts the soak in the background ignores it
    # for the job, and Python then installs no handler of its own.
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    status = 1
    try:
        status = soak.run()
    except KeyboardInterrupt as e:
        log(f"interrupted ({e or 'SIGINT'}); cleaning up")
        status = 130
    except Exception as e:
        log(f"error: {e}")
        status = 1
    finally:
        soak.cleanup()
    sys.exit(status)


if __name__ == "__main__":
    main()
