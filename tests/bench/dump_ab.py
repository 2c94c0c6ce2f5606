#!/usr/bin/env python3
"""Two memprofctl builds dumping the same 134 MiB heap in turn, each dump
timed end to end and against jemalloc's own time for it in the agent.

The target is speed.py's (many_stacks_target, every allocation sampled);
the agent is the one in --build. For each dump: the wall time, jemalloc's
own time from the agent's log ("heap profile #N: ... bytes in ... ms"),
memprofctl's time beyond it, the target's CPU (/proc/<pid>/stat) and
memprofctl's. The first round is dropped. --busy-core keeps one core busy
with a spinning process meanwhile, as a loaded host would.

    python3 tests/bench/dump_ab.py --build build --runs 12 /tmp/old-memprofctl build/cli/memprofctl
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

LOG_LINE = re.compile(r"heap profile #\d+: \d+ bytes in (\d+) ms")


def process_cpu_ms(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def start_target(build, work):
    read_fd, write_fd = os.pipe()
    env = dict(os.environ, LD_PRELOAD=os.path.join(build, "agent", "libmemprof_agent.so"),
               MEMPROF_SOCKET_DIR=work, MEMPROF_LOG_LEVEL="info", MEMPROF_TEST_READY_FD=str(write_fd),
               MALLOC_CONF="prof:true,prof_active:true,lg_prof_sample:0")
    log = open(os.path.join(work, "target.log"), "w")
    proc = subprocess.Popen([os.path.join(build, "tests", "testprogs", "many_stacks_target"),
                             "--stacks", "100000", "--pad-frames", "64"],
                            env=env, pass_fds=(write_fd,), stderr=log)
    os.close(write_fd)
    with os.fdopen(read_fd) as ready:
        if not ready.readline():
            proc.kill()
            sys.exit("dump_ab.py: many_stacks_target did not get ready")
    return proc


def one_dump(ctl, proc, work, out):
    with open(os.path.join(work, "target.log")) as log:
        before = len(LOG_LINE.findall(log.read()))
    cpu_before, children_before = process_cpu_ms(proc.pid), os.times()
    start = time.perf_counter()
    subprocess.run([ctl, "dump", "--pid", str(proc.pid), "--out", out, "--force"], check=True,
                   env=dict(os.environ, MEMPROF_SOCKET_DIR=work), capture_output=True)
    wall = (time.perf_counter() - start) * 1e3
    children = os.times()
    time.sleep(0.3)  # the agent lets go of the file (200 ms) before the target's CPU is read
    with open(os.path.join(work, "target.log")) as log:
        times = LOG_LINE.findall(log.read())
    if len(times) != before + 1:
        sys.exit("dump_ab.py: the agent did not log the dump")
    ctl_cpu = ((children.children_user - children_before.children_user)
               + (children.children_system - children_before.children_system)) * 1e3
    os.unlink(out)
    return wall, float(times[-1]), process_cpu_ms(proc.pid) - cpu_before, ctl_cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--busy-core", action="store_true")
    parser.add_argument("memprofctl", nargs=2)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="memprof-dump-ab-")
    out = os.path.join(tempfile.mkdtemp(prefix="memprof-dump-ab-", dir="/dev/shm"), "ctl.heap")
    spinner = subprocess.Popen(["sh", "-c", "while :; do :; done"]) if args.busy_core else None
    proc = start_target(args.build, work)
    rows = {ctl: [] for ctl in args.memprofctl}
    try:
        for _ in range(args.runs):
            for ctl in args.memprofctl:
                rows[ctl].append(one_dump(ctl, proc, work, out))
    finally:
        proc.kill()
        proc.wait()
        if spinner:
            spinner.kill()
            spinner.wait()
        subprocess.run(["rm", "-rf", work, os.path.dirname(out)], check=False)
    for ctl, samples in rows.items():
        samples = samples[1:]
        median = lambda k: statistics.median(s[k] for s in samples)
        beyond = sorted(round(s[0] - s[1]) for s in samples)
        print(f"{ctl}: end to end {median(0):.1f} ms, jemalloc in the agent {median(1):.1f} ms, "
              f"beyond it {statistics.median(beyond):.0f} ms {beyond}; target CPU {median(2):.0f} ms, "
              f"memprofctl CPU {median(3):.0f} ms")


if __name__ == "__main__":
    main()
