#!/usr/bin/python3
"""Sampling and scraping stay linear in the number of devices.

Generates kernel-shaped trees (tmpfs under /dev/shm) with a tiny, a small and
a large number of whole disks (/proc/diskstats lines with 17 counters, and
sys/block/<disk>/{dev,stat}), runs `iowatch serve` on each with injected
roots, and for each measures: the time of a full scrape of /metrics (best of
3), the iowatch_disk_* series it holds (every device must be there), and the
daemon's peak RSS (VmHWM). Required: every device served; the large tree's
scrape time per device within 3x of the small tree's, and its memory per
device (above the tiny tree's) within 3x: a quadratic step would be ~10x at
the default sizes. Prints the figures (docs/benchmarks.md, "Scale", records
the by-hand run with --sizes 10,10000,100000).

Usage: serve_scale.py IOWATCH_BINARY [--sizes TINY,SMALL,LARGE]
"""
import os
import shutil
import sys
import tempfile
import time

import daemon

REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "real-vm", "proc")


def disk_name(i):
    """sda, sdb, ... sdz, sdaa, ...: as the kernel names SCSI disks."""
    letters = ""
    i += 1
    while i > 0:
        i, r = divmod(i - 1, 26)
        letters = chr(ord("a") + r) + letters
    return "sd" + letters


def make_tree(root, disks):
    proc, block = os.path.join(root, "proc"), os.path.join(root, "sys", "block")
    os.makedirs(proc)
    os.makedirs(block)
    for name in ("stat", "meminfo", "vmstat", "uptime"):
        shutil.copy(os.path.join(REAL, name), proc)
    lines = []
    for i in range(disks):
        name = disk_name(i)
        major, minor = 8 + 16 * (i // 4096), (i % 4096) * 16  # distinct, kernel-like numbers
        counters = [1000 + i, 10, 8000 + i, 500, 200, 5, 1600, 300, 0, 700, 800, 0, 0, 0, 0, 3, 2]
        lines.append(f"{major:4d} {minor:7d} {name} " + " ".join(map(str, counters)))
        d = os.path.join(block, name)
        os.mkdir(d)
        with open(os.path.join(d, "dev"), "w") as f:
            f.write(f"{major}:{minor}\n")
        with open(os.path.join(d, "stat"), "w") as f:
            f.write(" ".join(f"{c:8d}" for c in counters) + "\n")
    with open(os.path.join(proc, "diskstats"), "w") as f:
        f.write("\n".join(lines) + "\n")


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def measure(binary, disks):
    root = tempfile.mkdtemp(prefix="iowatch-scale-", dir="/dev/shm")
    try:
        started = time.monotonic()
        make_tree(root, disks)
        made_s = time.monotonic() - started
        with daemon.Daemon(binary, procfs=f"{root}/proc", sysfs=f"{root}/sys") as d:
            body = b""
            best = float("inf")
            for _ in range(3):
                t0 = time.monotonic()
                status, _, body = d.get("/metrics", timeout=120)
                best = min(best, time.monotonic() - t0)
                assert status == 200, status
            text = body.decode()
            served = sum(1 for line in text.splitlines()
                         if line.startswith("iowatch_disk_reads_completed_total{"))
            return {"disks": disks, "scrape_s": best, "served": served,
                    "bytes": len(body), "hwm_kib": peak_rss_kib(d.proc.pid), "made_s": made_s}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main():
    daemon.exit_on_sigterm()
    args = [a for a in sys.argv[1:] if not a.startswith("--sizes")]
    sizes = [10, 1000, 10000]
    for a in sys.argv[1:]:
        if a.startswith("--sizes="):
            sizes = [int(x) for x in a.split("=", 1)[1].split(",")]
    if len(args) != 1 or len(sizes) != 3:
        print(__doc__)
        return 2
    r = daemon.Results()
    tiny, small, large = (measure(args[0], n) for n in sizes)
    for m in (tiny, small, large):
        print(f"note: {m['disks']:7d} disks: scrape {m['scrape_s'] * 1000:8.1f} ms "
              f"({m['bytes'] / 1e6:.1f} MB), peak RSS {m['hwm_kib'] / 1024:7.1f} MiB "
              f"(tree made in {m['made_s']:.1f} s)")
        r.check(m["served"] == m["disks"], f"{m['disks']} disks: every one served",
                f"{m['served']} of {m['disks']}")
    per_disk_s = [m["scrape_s"] / m["disks"] for m in (small, large)]
    r.check(per_disk_s[1] <= 3 * per_disk_s[0],
            f"scrape time per disk: {per_disk_s[0] * 1e6:.1f} us at {small['disks']}, "
            f"{per_disk_s[1] * 1e6:.1f} us at {large['disks']} (within 3x)")
    per_disk_kib = [(m["hwm_kib"] - tiny["hwm_kib"]) / (m["disks"] - tiny["disks"])
                    for m in (small, large)]
    r.check(per_disk_kib[1] <= 3 * max(per_disk_kib[0], 1.0),
            f"memory per disk: {per_disk_kib[0]:.2f} KiB at {small['disks']}, "
            f"{per_disk_kib[1]:.2f} KiB at {large['disks']} (within 3x)")
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
