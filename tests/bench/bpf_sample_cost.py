#!/usr/bin/python3
"""User-space cost of the BPF collector per sample with many disks (root, BTF), side by side
with the diskstats collector of the same samples.

Attaches N loop devices (default 64) over files in /dev/shm, reads and writes 1 MiB on each
with O_DIRECT so that every disk has read and write series (and a cgroup of its own does the
reads, so the cgroup attribution has N pairs), starts `iowatch serve` with
collectors.bpf.enabled on them, and reports over S samples (default 60) the median and p90 of
iowatch_collector_duration_seconds for "bpf" and "diskstats", with the series per scrape.

Usage: bpf_sample_cost.py IOWATCH [--devices 64] [--samples 60]
Run by hand; the figures go to docs/benchmarks.md ("The BPF collector's cost").
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import daemon  # noqa: E402
from serve_cgroup_io import Cgroup, mounts  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("iowatch")
    ap.add_argument("--devices", type=int, default=64)
    ap.add_argument("--samples", type=int, default=60)
    a = ap.parse_args()
    daemon.require_root("loading a BPF program and creating loop devices")
    work = tempfile.mkdtemp(prefix="iowatch-bpf-cost-", dir="/dev/shm")
    loops = []
    unified, v2_io, blkio = mounts()
    root = unified if v2_io else blkio
    try:
        for i in range(a.devices):
            image = os.path.join(work, f"d{i}")
            with open(image, "wb") as f:
                f.truncate(8 << 20)
            loops.append(subprocess.run(["losetup", "-f", "--show", image], check=True,
                                        capture_output=True, text=True).stdout.strip())
        names = "|".join(os.path.basename(l) for l in loops)
        config = (f"probes:\n  enabled: false\ndevices:\n  include: '^({names})$'\n"
                  f"  exclude: ''\ncollectors:\n  bpf:\n    enabled: true\n")
        with daemon.Daemon(a.iowatch, config=config) as d, \
                Cgroup(root, f"iowatch-bench-{os.getpid()}/io") as cg:
            d.scrape_until(lambda s: daemon.values(s, "iowatch_collector_success",
                                                   collector="bpf") == [1], 15)
            for loop in loops:
                subprocess.run(["dd", f"if=/dev/zero", f"of={loop}", "bs=1M", "count=1",
                                "oflag=direct"], check=True, capture_output=True)
                subprocess.run(["sh", "-c", f"echo $$ > {cg.path}/cgroup.procs && exec dd "
                                f"if={loop} of=/dev/null bs=1M count=1 iflag=direct"],
                               check=True, capture_output=True)
            time.sleep(2)
            durations = {"bpf": [], "diskstats": []}
            series = 0
            for _ in range(a.samples):
                samples = d.scrape_after_next_sample()
                for c in durations:
                    durations[c] += daemon.values(samples, "iowatch_collector_duration_seconds",
                                                  collector=c)
                series = sum(1 for n, _, _ in samples if n.startswith("iowatch_block_"))
            print(f"{a.devices} disks with reads and writes, {series} iowatch_block_* series "
                  f"per scrape, {a.samples} samples")
            for c, v in durations.items():
                v.sort()
                print(f"  {c:10} median {statistics.median(v) * 1e6:8.0f} µs   "
                      f"p90 {v[int(0.9 * (len(v) - 1))] * 1e6:8.0f} µs")
    finally:
        for loop in loops:
            subprocess.run(["losetup", "-d", loop], check=False)
        subprocess.run(["rm", "-rf", work], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
