#!/usr/bin/python3
"""Compares `iowatch iostat` with sysstat's iostat, byte for byte, on random fixtures.

Inside a private mount namespace the fixture's uptime, stat and devices are
bound over /proc and a tmpfs on /dev gets a node per fixture device (sysstat
resolves named partitions and -N through /dev); then
`iostat -f <fixture>/sys ARGS` and
`iowatch --path.procfs=<fixture>/proc --path.sysfs=<fixture>/sys iostat ARGS`
run under the same frozen clock. The first report of both is the since-boot
average, so the result is deterministic.

Usage: compare_iostat.py IOWATCH_BINARY [--fixtures N] [--seed S]
Needs root (unshare -m, mount); exits 77 (skip) when that is refused.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refcompare  # noqa: E402

FIXED_OPTIONS = [
    "", "-x", "-x -k", "-x -m", "-d", "-d -m", "-c", "-p ALL", "-x -p ALL", "-p", "-d -p",
    "-z", "-x -z", "ALL", "-x ALL", "-N", "-x -N", "-t", "-x -t", "-y", "-o JSON",
    "-o JSON -x", "-o JSON -x -m", "-o JSON -c", "-o JSON -d -t", "-o JSON -x -p ALL",
    "-o JSON -N -x", "-x -c", "-xz -p ALL",
]


def option_sets(rng, devices, dm_names):
    sets = list(FIXED_OPTIONS)
    names = [d[0] for d in devices]
    disks = [d[0] for d in devices if d[4] is None]
    parts = [d[0] for d in devices if d[4] is not None]
    sets.append("-x " + " ".join(rng.sample(names, min(3, len(names)))))
    sets.append("-d " + " ".join(rng.sample(names, min(2, len(names)))) + " nosuchdev")
    sets.append("-x -p " + ",".join(rng.sample(disks, min(2, len(disks)))))
    sets.append("-p " + rng.choice(disks))
    if parts:
        sets.append("-x " + rng.choice(parts))
    if dm_names:
        sets.append("-N -x " + rng.choice(list(dm_names.values())))
    return sets


def build_case(rng, fixture, devices, dm_names, iowatch, outdir):
    proc, sysd = os.path.join(fixture, "proc"), os.path.join(fixture, "sys")
    lines = refcompare.bind_lines(fixture, ["uptime", "stat", "devices"])
    lines += ["mount -t tmpfs none /dev", "mknod /dev/null c 1 3", "chmod 666 /dev/null",
              "mkdir -m 1777 /dev/shm", "mkdir /dev/mapper"]
    for name, major, minor, _, _ in devices:
        lines.append(f"mknod /dev/{name} b {major} {minor}")
    for kernel, mapped in dm_names.items():
        lines.append(f"ln -s ../{kernel} /dev/mapper/{mapped}")
    sets = option_sets(rng, devices, dm_names)
    for i, opts in enumerate(sets):
        # Some cases run with POSIXLY_CORRECT, where sysstat counts 512-byte blocks.
        posix = "POSIXLY_CORRECT=1 " if "-k" not in opts and "-m" not in opts and i % 7 == 3 else ""
        lines += refcompare.run_pair_lines(
            i, outdir, f"/usr/bin/iostat -f {sysd} {opts}",
            f"{iowatch} --path.procfs={proc} --path.sysfs={sysd} iostat {opts}", posix)
    return "\n".join(lines) + "\n", sets


if __name__ == "__main__":
    sys.exit(refcompare.main(__doc__, build_case))
