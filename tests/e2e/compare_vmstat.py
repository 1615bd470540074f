#!/usr/bin/python3
"""Compares `iowatch vmstat` with procps-ng's vmstat, byte for byte, on random fixtures.

Inside a private mount namespace the fixture's stat, meminfo and vmstat are
bound over /proc; then `vmstat ARGS` and
`iowatch --path.procfs=<fixture>/proc vmstat ARGS` run under the same frozen
clock. Without a delay both print the since-boot line, so the result is
deterministic.

Usage: compare_vmstat.py IOWATCH_BINARY [--fixtures N] [--seed S]
Needs root (unshare -m, mount); exits 77 (skip) when that is refused.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refcompare  # noqa: E402

OPTIONS = ["", "-a", "-w", "-w -a", "-t", "-w -t", "-a -t", "-wat", "-S k", "-S K", "-S m",
           "-S M", "-w -S m", "-a -S M", "-n", "-Sm -w"]


def build_case(rng, fixture, devices, dm_names, iowatch, outdir):
    proc = os.path.join(fixture, "proc")
    lines = refcompare.bind_lines(fixture, ["stat", "meminfo", "vmstat"])
    for i, opts in enumerate(OPTIONS):
        lines += refcompare.run_pair_lines(i, outdir, f"/usr/bin/vmstat {opts}",
                                           f"{iowatch} --path.procfs={proc} vmstat {opts}")
    return "\n".join(lines) + "\n", OPTIONS


if __name__ == "__main__":
    sys.exit(refcompare.main(__doc__, build_case))
