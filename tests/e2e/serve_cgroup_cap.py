#!/usr/bin/python3
"""The cgroup series' cap on a host with 10,000 cgroups: never unbounded cardinality.

A generated tree (tmpfs): cgroup v2 mounted at /sys/fs/cgroup with the io controller,
10,000 services under system.slice each with io.stat lines for 4 disks (40,000 cgroup x device
pairs, plus the slice's 4), served with the default cgroups.max_series (2,000). Checked: at
most 2,000 pairs are exported (iowatch_cgroup_io_read_bytes_total series), the rest are
counted in iowatch_cgroup_io_dropped_series ((10,000 + 1) x 4 - 2,000 = 38,004), the log says so once,
the collector succeeds, and a scrape takes under 50 ms (the best of five: the machine is
shared); the sample time is printed.

Usage: serve_cgroup_cap.py IOWATCH_BINARY
"""
import os
import shutil
import sys
import tempfile
import time
import traceback

import daemon
import serve_scale

CGROUPS = 10000
DISKS = 4
CAP = 2000


def make_cgroups(root):
    """v2 mounted at /sys/fs/cgroup under `root`, every service reading from every disk."""
    with open(os.path.join(root, "proc", "self_mountinfo"), "w") as f:
        f.write("25 21 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n")
    os.makedirs(os.path.join(root, "proc", "self"))
    os.replace(os.path.join(root, "proc", "self_mountinfo"),
               os.path.join(root, "proc", "self", "mountinfo"))
    base = os.path.join(root, "sys", "fs", "cgroup")
    os.makedirs(os.path.join(base, "system.slice"))
    with open(os.path.join(base, "cgroup.controllers"), "w") as f:
        f.write("cpu io memory\n")
    lines = "".join(f"8:{16 * d} rbytes={4096 * (d + 1)} wbytes=0 rios={d + 1} wios=0 dbytes=0 "
                    "dios=0\n" for d in range(DISKS))
    with open(os.path.join(base, "system.slice", "io.stat"), "w") as f:
        f.write(lines)
    for i in range(CGROUPS):
        d = os.path.join(base, "system.slice", f"unit-{i:05d}.service")
        os.mkdir(d)
        with open(os.path.join(d, "io.stat"), "w") as f:
            f.write(lines)


def main():
    daemon.exit_on_sigterm()
    binary = sys.argv[1]
    r = daemon.Results()
    root = tempfile.mkdtemp(prefix="iowatch-cgcap-", dir="/dev/shm")
    try:
        serve_scale.make_tree(root, DISKS)
        make_cgroups(root)
        config = "probes:\n  enabled: false\n"
        with daemon.Daemon(binary, config=config, procfs=f"{root}/proc",
                           sysfs=f"{root}/sys") as d:
            samples = d.scrape_after_next_sample(timeout=30)
            best = float("inf")
            for _ in range(5):
                t0 = time.monotonic()
                status, _, _ = d.get("/metrics", timeout=30)
                best = min(best, time.monotonic() - t0)
            exported = len(daemon.values(samples, "iowatch_cgroup_io_read_bytes_total"))
            dropped = daemon.values(samples, "iowatch_cgroup_io_dropped_series")
            duration = daemon.values(samples, "iowatch_collector_duration_seconds",
                                     collector="cgroup")
            print(f"note: {CGROUPS} cgroups x {DISKS} disks: sample {duration[0] * 1e3:.0f} ms, "
                  f"scrape {best * 1e3:.1f} ms")
            r.check(exported == CAP, f"{exported} pairs exported, the cap {CAP}")
            total = (CGROUPS + 1) * DISKS
            r.check(dropped == [total - CAP], f"the rest counted: {dropped} (of {total})")
            r.check(daemon.values(samples, "iowatch_collector_success", collector="cgroup") == [1],
                    "collector cgroup succeeds")
            r.check(status == 200 and best < 0.050, f"a scrape takes {best * 1e3:.1f} ms (< 50)")
            log = d.stderr()
            r.check(log.count("cgroups.max_series") == 1,
                    "the log says so once", log[-2000:])
    except Exception:
        traceback.print_exc()
        r.check(False, "no exception")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
