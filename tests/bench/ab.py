#!/usr/bin/env python3
"""Times two commands interleaved (A B, B A, A B, ...) and prints the medians.

For comparing two builds of memprofctl on the same input, where drift on a
noisy machine would otherwise favour whichever ran first:

    python3 tests/bench/ab.py --runs 40 -- old/memprofctl report d.heap -- new/memprofctl report d.heap

Standard output and error of both commands go to /dev/null; a command that
fails stops the script. Timings are wall-clock, process start to exit.
"""
import argparse
import statistics
import subprocess
import sys
import time


def run(command):
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1e3


def split_commands(words):
    if words.count("--") != 1 or words[0] == "--" or words[-1] == "--":
        sys.exit("ab.py: give two commands separated by --: ab.py [--runs N] -- A... -- B...")
    cut = words.index("--")
    return words[:cut], words[cut + 1:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="pairs (default 30)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed pairs first (default 3)")
    parser.add_argument("commands", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    words = options.commands[1:] if options.commands[:1] == ["--"] else options.commands
    a, b = split_commands(words)
    for _ in range(options.warmup):
        run(a)
        run(b)
    times_a, times_b = [], []
    for i in range(options.runs):
        if i % 2 == 0:
            times_a.append(run(a))
            times_b.append(run(b))
        else:
            times_b.append(run(b))
            times_a.append(run(a))
    median_a, median_b = statistics.median(times_a), statistics.median(times_b)
    print(f"A: {median_a:.1f} ms  B: {median_b:.1f} ms  B/A: {median_b / median_a:.3f}  "
          f"({options.runs} pairs)")


if __name__ == "__main__":
    main()
