#!/usr/bin/env python3
"""memprof against its anchors (docs/contract.md section 5), side by side.

Each comparison runs memprof's command and its anchor's in one run on the same
machine, interleaved (A B, B A, A B, ...: drift and caches hit both alike),
and reports the medians, the ratio memprof/anchor against the goal (issue
13's for start-up, issue 44's for the rest), and each side's peak RSS:

  startup  `memprofctl --version` vs `redis-cli --version`
  stats    `memprofctl stats --raw` vs `redis-cli MEMORY MALLOC-STATS` on one
           Debian redis-server with the agent preloaded: warm (the agent's
           gRPC server up) and cold (first contact after its idle shutdown)
  dump     `memprofctl dump` of a >= 100 MB profile into tmpfs vs the target
           calling mallctl("prof.dump") itself into tmpfs, timed inside it
  report   `memprofctl report` in every format, and with --base, vs jeprof on
           the same dump of Debian's clang++-14 compiling a big C++ file
  report-gcc  the same on a dump of another shape: GCC 12's cc1plus
           compiling that file; for both, each timed run follows an untimed
           run of the same command (--no-warm: not), see same_run_first

  tests/bench/speed.py [--build DIR] [--runs N] [--jeprof-runs N] [WHAT...]

WHAT is any of startup, stats, dump, report, report-gcc (default: all).
Needs redis-server, redis-tools, jeprof (libjemalloc-dev), clang-14, g++-12
and graphviz (jeprof --svg runs dot). Prints Markdown: the machine, the date, one table.
Timing assertions stay out of the test suite; this is where the figures in
docs/performance.md come from.
"""

import argparse
import contextlib
import datetime
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Issue 44: report 200x jeprof, stats warm <= 1.0x and cold <= 1.2x redis-cli,
# dump <= 1.0x prof.dump. Start-up keeps issue 13's.
GOALS = {"startup": 1.2, "stats": 1.0, "stats-cold": 1.2, "dump": 1.0, "report": 0.005}


class Sample:
    def __init__(self, seconds, rss_kib):
        self.seconds = seconds
        self.rss_kib = rss_kib


def run_once(argv, env=None, cwd=None):
    """Wall time and peak RSS of one command; its output is discarded."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"speed.py: {' '.join(argv)} exited {proc.returncode}: {err.strip()}")
    return Sample(seconds, usage.ru_maxrss)


class Side:
    """One side of a comparison: a name and how to take one sample."""

    def __init__(self, name, sample, prepare=None):
        self.name = name
        self.sample = sample
        self.prepare = prepare or (lambda: None)
        self.samples = []

    @classmethod
    def command(cls, name, argv, env=None, prepare=None):
        return cls(name, lambda: run_once(argv, env), prepare)

    @classmethod
    def measured(cls, name, seconds):
        """A side whose times were taken elsewhere (no peak RSS of its own)."""
        side = cls(name, None)
        side.samples = [Sample(s, 0) for s in seconds]
        return side

    def take(self, keep):
        self.prepare()
        sample = self.sample()
        if keep:
            self.samples.append(sample)

    def median(self):
        return statistics.median(s.seconds for s in self.samples)

    def peak_rss_mib(self):
        return max(s.rss_kib for s in self.samples) / 1024


def interleave(ours, anchor, runs, warmup=1):
    for i in range(warmup + runs):
        pair = (ours, anchor) if i % 2 == 0 else (anchor, ours)
        for side in pair:
            side.take(keep=i >= warmup)


def rss_text(side):
    mib = side.peak_rss_mib()
    return f"{mib:.0f} MiB" if mib else "—"


def seconds_text(seconds):
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


class Table:
    def __init__(self):
        self.rows = []
        self.notes = []

    def add(self, what, ours, anchor, goal, runs):
        ratio = ours.median() / anchor.median()
        if goal is None:  # a row that explains another: no goal of its own
            verdict = f"{ratio:.3f}x"
            met = None
        elif goal < 1:
            verdict = f"{1 / ratio:.0f}x faster (goal {1 / goal:.0f}x)"
            met = ratio <= goal
        else:
            verdict = f"{ratio:.2f}x (goal <= {goal}x)"
            met = ratio <= goal
        self.rows.append(
            f"| {what} | `{ours.name}` | `{anchor.name}` | {seconds_text(ours.median())} | "
            f"{seconds_text(anchor.median())} | {verdict} | "
            f"{'—' if met is None else 'yes' if met else '**no**'} | "
            f"{rss_text(ours)} | {rss_text(anchor)} | {runs} |")
        print(self.rows[-1], file=sys.stderr, flush=True)

    def print(self):
        print("| comparison | memprof | anchor | memprof median | anchor median | ratio "
              "| goal met | memprof peak RSS | anchor peak RSS | runs |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for row in self.rows:
            print(row)
        for note in self.notes:
            print(f"\n{note}")

    def note(self, text):
        self.notes.append(text)
        print(text, file=sys.stderr, flush=True)


def wait_until(what, predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    sys.exit(f"speed.py: timed out waiting for {what}")


def succeeds(argv):
    return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


class Processes:
    """Every process a benchmark starts, killed when it ends."""

    def __init__(self):
        self.procs = []

    def start(self, argv, **kwargs):
        proc = subprocess.Popen(argv, **kwargs)
        self.procs.append(proc)
        return proc

    def close(self):
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait()


# --- startup -------------------------------------------------------------------

def bench_startup(ctx, table):
    ours = Side.command("memprofctl --version", [ctx.ctl, "--version"])
    anchor = Side.command("redis-cli --version", ["redis-cli", "--version"])
    interleave(ours, anchor, ctx.runs * 4, warmup=5)
    table.add("start-up", ours, anchor, GOALS["startup"], ctx.runs * 4)


# --- stats ---------------------------------------------------------------------

def start_redis(ctx, procs, port, extra_env):
    env = dict(os.environ, LD_PRELOAD=ctx.agent, MALLOC_CONF="prof:true,prof_active:false",
               MEMPROF_SOCKET_DIR=ctx.work, **extra_env)
    proc = procs.start(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                        "--enable-debug-command", "yes",
                        "--logfile", os.path.join(ctx.work, f"redis-{port}.log")], env=env)
    wait_until(f"redis-server on port {port}", lambda: succeeds(["redis-cli", "-p", str(port), "ping"]))
    subprocess.run(["redis-cli", "-p", str(port), "debug", "populate", "200000"], check=True,
                   stdout=subprocess.DEVNULL)
    return proc


def agent_server_up(pid):
    """Whether the agent's gRPC server threads (memprof-*, beside memprof-accept) run."""
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(FileNotFoundError):
            with open(f"/proc/{pid}/task/{task}/comm") as comm:
                name = comm.read().strip()
            if name.startswith("memprof-") and name != "memprof-accept":
                return True
    return False


def bench_stats(ctx, table):
    procs = Processes()
    try:
        warm = start_redis(ctx, procs, 16391, {})
        ctl_env = dict(os.environ, MEMPROF_SOCKET_DIR=ctx.work)
        stats = [ctx.ctl, "stats", "--raw", "--pid", str(warm.pid)]
        anchor = Side.command("redis-cli MEMORY MALLOC-STATS",
                              ["redis-cli", "-p", "16391", "MEMORY", "MALLOC-STATS"])
        ours = Side.command("memprofctl stats --raw", stats, ctl_env)
        interleave(ours, anchor, ctx.runs * 2, warmup=3)
        table.add("stats, warm agent", ours, anchor, GOALS["stats"], ctx.runs * 2)

        cold = start_redis(ctx, procs, 16392, {"MEMPROF_IDLE_TIMEOUT": "1s"})
        cold_stats = [ctx.ctl, "stats", "--raw", "--pid", str(cold.pid)]
        # Before each run: wait until the agent's server has shut down again.
        torn_down = lambda: wait_until("the agent's idle shutdown",
                                       lambda: not agent_server_up(cold.pid))
        ours_cold = Side.command("memprofctl stats --raw (cold)", cold_stats, ctl_env, torn_down)
        anchor = Side.command("redis-cli MEMORY MALLOC-STATS",
                              ["redis-cli", "-p", "16392", "MEMORY", "MALLOC-STATS"])
        interleave(ours_cold, anchor, ctx.runs, warmup=1)
        table.add("stats, cold agent", ours_cold, anchor, GOALS["stats-cold"], ctx.runs)
    finally:
        procs.close()


# --- dump ----------------------------------------------------------------------

class TargetLog:
    """The dump target's stderr, read as needed: its own prof.dump's times
    (many_stacks_target --dump-requests) and its agent's, jemalloc's own time
    for each dump memprofctl asked for (MEMPROF_LOG_LEVEL=info)."""

    SELF = re.compile(r"prof\.dump wrote (\d+) bytes to \S+ in ([0-9.]+) s")
    AGENT = re.compile(r"heap profile #\d+: \d+ bytes in (\d+) ms")

    def __init__(self, proc):
        self.proc = proc

    def next_seconds(self, pattern, scale):
        """The time in the next line that matches; every line before it is skipped."""
        while True:
            line = self.proc.stderr.readline().decode()
            if not line:
                sys.exit("speed.py: the dump target ended")
            match = pattern.search(line)
            if match:
                return float(match.group(match.lastindex)) * scale


class SelfDump:
    """The anchor: the target's own prof.dump, timed inside it (many_stacks_target)."""

    def __init__(self, proc, log, fifo, path):
        self.proc, self.log, self.path = proc, log, path
        self.requests = open(fifo, "w")

    def __call__(self):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        self.requests.write(self.path + "\n")
        self.requests.flush()
        return Sample(self.log.next_seconds(TargetLog.SELF, 1.0), vm_hwm_kib(self.proc.pid))


class AgentDump:
    """memprof's side: `memprofctl dump` end to end, and jemalloc's own time
    for the same dump inside the agent (its log line, written before the
    stream ends, so it is there once memprofctl has exited)."""

    def __init__(self, argv, env, log):
        self.argv, self.env, self.log = argv, env, log
        self.jemalloc = []

    def __call__(self):
        sample = run_once(self.argv, self.env)
        self.jemalloc.append(self.log.next_seconds(TargetLog.AGENT, 1e-3))
        return sample


def vm_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def bench_dump(ctx, table):
    shm = tempfile.mkdtemp(prefix="memprof-bench-", dir="/dev/shm")
    procs = Processes()
    try:
        fifo = os.path.join(ctx.work, "dump-requests")
        os.mkfifo(fifo)
        read_fd, write_fd = os.pipe()
        env = dict(os.environ, LD_PRELOAD=ctx.agent, MEMPROF_SOCKET_DIR=ctx.work,
                   MALLOC_CONF="prof:true,prof_active:true,lg_prof_sample:0",
                   MEMPROF_LOG_LEVEL="info", MEMPROF_TEST_READY_FD=str(write_fd))
        proc = procs.start([ctx.stacks_target, "--stacks", "100000", "--pad-frames", "64",
                            "--self-dump", os.path.join(shm, "first.heap"),
                            "--dump-requests", fifo],
                           env=env, pass_fds=(write_fd,), stderr=subprocess.PIPE)
        os.close(write_fd)
        with os.fdopen(read_fd) as ready:
            if not ready.readline():
                sys.exit("speed.py: many_stacks_target did not get ready")
        log = TargetLog(proc)
        anchor = Side("target's own prof.dump",
                      SelfDump(proc, log, fifo, os.path.join(shm, "self.heap")))
        out = os.path.join(shm, "ctl.heap")

        def fresh_out():
            # As for the anchor (SelfDump): a new file each time, not the
            # previous run's 134 MiB freed inside the timed rename.
            with contextlib.suppress(FileNotFoundError):
                os.unlink(out)

        agent_dump = AgentDump([ctx.ctl, "dump", "--pid", str(proc.pid), "--out", out, "--force"],
                               dict(os.environ, MEMPROF_SOCKET_DIR=ctx.work), log)
        ours = Side("memprofctl dump --out /dev/shm/…", agent_dump, prepare=fresh_out)
        interleave(ours, anchor, ctx.runs, warmup=1)
        size = os.path.getsize(out) / 2**20
        table.add(f"dump of {size:.0f} MiB", ours, anchor, GOALS["dump"], ctx.runs)
        # What the dump's time is made of: jemalloc's own prof.dump in the
        # agent (the same code as the anchor's) and memprofctl beyond it.
        jemalloc = agent_dump.jemalloc[1:]  # the warm-up run's dropped, as its sample is
        inside = Side.measured("jemalloc's prof.dump in the agent", jemalloc)
        table.add(f"dump of {size:.0f} MiB: jemalloc's own time in the agent", inside, anchor,
                  None, ctx.runs)
        beyond = [o.seconds - j for o, j in zip(ours.samples, jemalloc)]
        table.note(f"memprofctl beyond jemalloc's own time in the agent, the same dump: median "
                   f"{statistics.median(beyond) * 1e3:.1f} ms (from {min(beyond) * 1e3:.1f} to "
                   f"{max(beyond) * 1e3:.1f} ms, {len(beyond)} dumps): its start, the request, "
                   f"the last copy and its exit.")
    finally:
        procs.close()
        shutil.rmtree(shm, ignore_errors=True)


# --- report --------------------------------------------------------------------

# The two dump shapes: a compiler's heap while it compiles tests/bench/data/big.cc
# under jemalloc with every allocation of 32 bytes or more sampled. clang++-14
# (LLVM's libraries, stripped, about 57 frames a stack) and GCC 12's cc1plus
# (one big non-PIE executable with exported symbols only, about 54 frames).
COMPILERS = {
    "clang": {"driver": "clang++-14", "binary": lambda: os.path.realpath(shutil.which("clang++-14"))},
    "gcc": {"driver": "g++-12", "binary": lambda: subprocess.run(
        ["g++-12", "-print-prog-name=cc1plus"], capture_output=True, text=True,
        check=True).stdout.strip()},
}


def compiler_dump(ctx, compiler, name, optimize):
    """The compiler's heap profile at exit: the biggest dump of its processes."""
    prefix = os.path.join(ctx.work, name)
    env = dict(os.environ, LD_PRELOAD=ctx.jemalloc,
               MALLOC_CONF=f"prof:true,prof_active:true,lg_prof_sample:5,prof_final:true,"
                           f"prof_prefix:{prefix}")
    subprocess.run([COMPILERS[compiler]["driver"], "-std=c++20", optimize, "-g", "-c",
                    os.path.join(HERE, "data", "big.cc"), "-o", os.path.join(ctx.work, name + ".o")],
                   env=env, check=True)
    dumps = sorted((f for f in os.listdir(ctx.work) if f.startswith(name + ".") and f.endswith(".heap")),
                   key=lambda f: os.path.getsize(os.path.join(ctx.work, f)))
    return os.path.join(ctx.work, dumps[-1])


def total_line(text):
    """The figure of the "Total:" line: jeprof says MB where memprofctl says MiB (both 2^20)."""
    match = re.search(r"^Total: (-?[0-9.]+) Mi?B$", text, re.M)
    return match.group(1) + " MiB" if match else "(none)"


def check_totals(ctx, binary, dump, base):
    def out(argv):
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    pairs = [([ctx.ctl, "report", dump, "--format", "text"], ["jeprof", "--text", binary, dump]),
             ([ctx.ctl, "report", dump, "--base", base, "--format", "text"],
              ["jeprof", "--text", "--base", base, binary, dump])]
    for ours, theirs in pairs:
        a, b = total_line(out(ours)), total_line(out(theirs))
        print(f"{'equal' if a == b else 'DIFFERENT'}: memprofctl `{a}`, jeprof `{b}`"
              f" ({' '.join(ours[2:])})", file=sys.stderr)
        ctx.notes.append(f"Totals {'equal' if a == b else '**different**'}"
                         f" for `{' '.join(os.path.basename(x) for x in ours[1:])}`: `{a}` / `{b}`")


def same_run_first(ctx, argv):
    """Unless --no-warm is given, each timed run of a report comparison
    follows an untimed run of the same command, on both sides. This VM's
    cores run a fixed loop 2 to 3 times slower for the first 0.1 to 0.5 s of
    work after they idled (docs/performance.md, section 4): all of an 80 ms
    report, a sliver of a 20 s jeprof. Run after run, both are timed on
    cores that are already running, as hyperfine's --warmup would."""
    if not ctx.warm:
        return None
    return lambda: run_once(argv)


def bench_report(ctx, table, compiler="clang"):
    binary = COMPILERS[compiler]["binary"]()
    given = ctx.dumps.get(compiler, (None, None))
    dump = given[0] or compiler_dump(ctx, compiler, f"{compiler}-new", "-O2")
    base = given[1] or compiler_dump(ctx, compiler, f"{compiler}-old", "-O1")
    check_totals(ctx, binary, dump, base)
    formats = [("text", ["--text"]), ("collapsed", ["--collapsed"]), ("svg", ["--svg"]),
               ("pprof", ["--text"]), ("json", ["--text"])]
    cases = [(f, [dump, "--format", f], j + [binary, dump]) for f, j in formats]
    cases.append(("text --base", [dump, "--base", base, "--format", "text"],
                  ["--text", "--base", base, binary, dump]))
    for label, ours_args, jeprof_args in cases:
        # Both write to standard output, which run_once discards: a file
        # would add memprofctl's fsync (101 MB for collapsed) to one side only.
        ours_argv = [ctx.ctl, "report", *ours_args, "--out", "-"]
        anchor_argv = ["jeprof", *jeprof_args]
        ours = Side.command(f"memprofctl report --format {label}", ours_argv,
                            prepare=same_run_first(ctx, ours_argv))
        anchor = Side.command("jeprof " + " ".join(a for a in jeprof_args if a.startswith("--")),
                              anchor_argv, prepare=same_run_first(ctx, anchor_argv))
        # With --warm every timed run has its own untimed one before it.
        interleave(ours, anchor, ctx.jeprof_runs, warmup=0 if ctx.warm else 1)
        table.add(f"report ({compiler}), {label}", ours, anchor, GOALS["report"],
                  ctx.jeprof_runs)


def bench_report_gcc(ctx, table):
    bench_report(ctx, table, "gcc")


# --- main ----------------------------------------------------------------------

BENCHES = {"startup": bench_startup, "stats": bench_stats, "dump": bench_dump,
           "report": bench_report, "report-gcc": bench_report_gcc}


def machine():
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB, {platform.platform()}"


def find_jemalloc():
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "libjemalloc.so.2 " in line:
            return line.split("=>")[-1].strip()
    sys.exit("speed.py: libjemalloc.so.2 not found by ldconfig")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="*", help=", ".join(BENCHES) + " (default: all)")
    parser.add_argument("--build", default="build")
    parser.add_argument("--runs", type=int, default=11, help="interleaved pairs per comparison")
    parser.add_argument("--jeprof-runs", type=int, default=3, help="pairs for report vs jeprof")
    parser.add_argument("--no-warm", dest="warm", action="store_false",
                        help="report: time each run cold, not right after the same run untimed")
    parser.add_argument("--dump", help="report: use this clang dump instead of making one")
    parser.add_argument("--base", help="report: the --base dump (with --dump)")
    parser.add_argument("--gcc-dump", help="report-gcc: use this cc1plus dump instead of making one")
    parser.add_argument("--gcc-base", help="report-gcc: the --base dump (with --gcc-dump)")
    ctx = parser.parse_args()
    unknown = [w for w in ctx.what if w not in BENCHES]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    build = os.path.abspath(ctx.build)
    ctx.ctl = os.path.join(build, "cli", "memprofctl")
    ctx.agent = os.path.join(build, "agent", "libmemprof_agent.so")
    ctx.stacks_target = os.path.join(build, "tests", "testprogs", "many_stacks_target")
    ctx.jemalloc = find_jemalloc()
    ctx.notes = []
    ctx.dumps = {"clang": (ctx.dump, ctx.base), "gcc": (ctx.gcc_dump, ctx.gcc_base)}
    table = Table()
    with tempfile.TemporaryDirectory(prefix="memprof-bench-") as work:
        ctx.work = work
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
        for what in ctx.what or BENCHES:
            BENCHES[what](ctx, table)
    commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print(f"`tests/bench/speed.py {' '.join(sys.argv[1:])}` on {machine()}, "
          f"{datetime.date.today().isoformat()}, commit {commit}.\n")
    table.print()
    for note in ctx.notes:
        print(f"\n{note}")


if __name__ == "__main__":
    main()
