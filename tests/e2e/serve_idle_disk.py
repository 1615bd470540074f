#!/usr/bin/python3
"""Sampling never wakes a disk: an idle loop device's I/O counters do not move (root).

A loop device over a new file, nothing mounted on it, is watched by `iowatch serve` with every
source on (devices.exclude "" so loops are reported, cgroups and /proc/PID/io read every
sample) at a 100 ms interval for --seconds (default 30 s: 300 samples; `--seconds=360` is an
hour of 1 s sampling in fast-forward, docs/hardening.md "Never waking a disk"). Its
/sys/block/loopN/stat must be the same before and after: iowatch reads only kernel-generated
text in /proc and /sys, which issues no I/O to the device. The daemon must have served the
device meanwhile, and placed it on the disk holding its backing file
(iowatch_disk_holder_info{holder="loopN"}).

Usage: serve_idle_disk.py IOWATCH_BINARY [--seconds=N]
"""
import os
import subprocess
import sys
import tempfile
import time
import traceback

import daemon


def stat_fields(loop):
    with open(f"/sys/block/{os.path.basename(loop)}/stat") as f:
        return f.read().split()


def main():
    daemon.require_root("attaching a loop device")
    daemon.exit_on_sigterm()
    binary = sys.argv[1]
    seconds = 30
    for arg in sys.argv[2:]:
        if arg.startswith("--seconds="):
            seconds = int(arg.split("=", 1)[1])
    r = daemon.Results()
    work = tempfile.mkdtemp(prefix="iowatch-idle-", dir="/var/tmp")
    image, loop = os.path.join(work, "disk.img"), None
    try:
        with open(image, "wb") as f:
            f.truncate(64 << 20)
        loop = subprocess.run(["losetup", "-f", "--show", image], check=True,
                              capture_output=True, text=True).stdout.strip()
        name = os.path.basename(loop)
        time.sleep(1)  # udev's probe of a new device reads it once: let it finish
        before = stat_fields(loop)
        config = ("probes:\n  enabled: false\nsampling:\n  interval: 100ms\n  window: 1s\n"
                  "devices:\n  exclude: ''\ncgroups:\n  process_interval: 100ms\n")
        with daemon.Daemon(binary, config=config) as d:
            time.sleep(seconds)
            samples = d.scrape()
            served = daemon.values(samples, "iowatch_disk_reads_completed_total", device=name)
            taken = daemon.values(samples, "iowatch_sample_timestamp_seconds")
            holders = [labels for n, labels, _ in samples
                       if n == "iowatch_disk_holder_info" and labels.get("holder") == name]
        after = stat_fields(loop)
        r.check(served, f"{name} was served while sampled")
        r.check(before == after, f"{name}'s counters did not move over {seconds} s of sampling "
                f"every 100 ms ({before[:4]}... -> {after[:4]}...)", f"{before} -> {after}")
        r.check(taken, "samples were taken")
        st = os.stat(image)
        held = os.path.realpath(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
        if os.path.exists(os.path.join(held, "partition")):
            disk, part = os.path.basename(os.path.dirname(held)), os.path.basename(held)
        else:
            disk, part = os.path.basename(held), ""
        r.check(len(holders) == 1 and holders[0].get("device") == disk and
                holders[0].get("partition") == part,
                f"{name} is held on {disk}{' (' + part + ')' if part else ''}, where its backing "
                f"file lives ({holders})")
    except Exception:
        traceback.print_exc()
        r.check(False, "no exception")
    finally:
        if loop:
            subprocess.run(["losetup", "-d", loop], check=False)
        subprocess.run(["rm", "-rf", work], check=False)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
