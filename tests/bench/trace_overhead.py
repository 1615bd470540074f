#!/usr/bin/python3
"""What libiowatch-trace.so costs the program it traces, side by side.

trace_workload's 4 KiB read loop (read() of a 1 MiB file in the page cache, lseek back to 0
every 256 reads: each call is a page-cache copy, ~600 ns here, the case where a per-call cost
shows at its largest), COUNT reads per run, with and without the library preloaded,
alternating, ROUNDS rounds. Prints the median ns per read of each and their ratio, and the
ratio of the fastest runs (the least disturbed by the hypervisor); then the same with
IOWATCH_TRACE_TIMES=0 (counts without call times).

Usage: trace_overhead.py TRACE_WORKLOAD LIBRARY [--rounds 15] [--count 2000000]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile


def loop(workload, path, count, env):
    out = subprocess.run([workload, "loop", path, str(count)], capture_output=True, text=True,
                         check=True, env=env).stdout
    return float(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload")
    parser.add_argument("library")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--count", type=int, default=2_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="iowatch-trace-bench-", dir="/var/tmp") as d:
        path = os.path.join(d, "loop.dat")
        traced_env = dict(os.environ, LD_PRELOAD=os.path.abspath(args.library),
                          IOWATCH_TRACE_OUTPUT=os.path.join(d, "lines.json"))
        untimed_env = dict(traced_env, IOWATCH_TRACE_TIMES="0")
        plain, traced, untimed = [], [], []
        for _ in range(args.rounds):
            plain.append(loop(args.workload, path, args.count, dict(os.environ)))
            traced.append(loop(args.workload, path, args.count, traced_env))
            untimed.append(loop(args.workload, path, args.count, untimed_env))
    pm = statistics.median(plain)
    print(f"4 KiB read loop, {args.rounds} rounds x {args.count} reads")
    print(f"  alone            median {pm:7.1f} ns/read  fastest {min(plain):7.1f}")
    for name, runs in (("traced", traced), ("traced, no times", untimed)):
        m = statistics.median(runs)
        print(f"  {name:16} median {m:7.1f} ns/read  fastest {min(runs):7.1f}  overhead: median "
              f"{100 * (m / pm - 1):+.1f} %, fastest {100 * (min(runs) / min(plain) - 1):+.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
