#!/usr/bin/python3
"""A probe run on a device that stops answering leaves its I/O behind, and the daemon neither
leaks it nor probes the device again until it is answered (root, I/O throttling).

`iowatch serve` probes a file on ext4 on a loop device (direct 4k random reads at QD32, every
2 s, 3 s time limit) with libaio, and another on a second loop device with io_uring, side by
side. After a first completed run of each the block layer throttles the daemon's reads of both
disks to 1 a second (cgroup v2 `io.max riops=1`,
else v1 `blkio.throttle.read_iops_device`): the next run ends at its time limit with most of its
32 reads still queued, and gives them up after Close's 5 s wait. Checked, through scrapes, the
log and /proc/sys/fs/aio-nr:
1. the held I/Os are reported (iowatch_probe_held_ios > 0) and logged;
2. while they are held, the job's slots are given up (skips{reason="abandoned_io"} grows, runs
   "skipped") and no context is created (fs.aio-nr does not grow: each run used to take 32 of
   it, until other programs' libaio failed host-wide);
3. once the throttle is lifted the reads complete, the context and buffers are freed
   (iowatch_probe_held_ios 0, fs.aio-nr back where it was, logged) and the job runs again.
Skips (77) when not root or no I/O throttling controller is available.

Usage: serve_hung_device.py IOWATCH_BINARY
"""
import contextlib
import os
import shutil
import sys
import tempfile
import time

import daemon
from serve_regression import Throttle

ENGINES = ("libaio", "io_uring")  # a job each, on a device each, side by side


def config(directories):
    jobs = "".join(f"""\
    - name: {engine}
      every: 2s
      jitter: 0s
      timeout: 3s
      options:
        directory: {directory}
        size: 4M
        rw: randread
        bs: 4k
        ioengine: {engine}
        iodepth: 32
        direct: 1
        runtime: 300ms
        time_based: 1
""" for engine, directory in directories.items())
    return f"""\
probes:
  enabled: true
  busy_threshold: 1
  max_concurrent: {len(directories)}
  baseline:
{daemon.HOST_BLIND}  jobs:
{jobs}"""


def aio_nr():
    with open("/proc/sys/fs/aio-nr") as f:
        return int(f.read())


def metric(samples, name, **labels):
    v = daemon.values(samples, name, **labels)
    return v[0] if v else 0


def runs(samples, job, result):
    """Runs of `job` that ended `result`; "ok" counts those that completed beside the other
    job's too (contended: another probe measured meanwhile)."""
    results = ("ok", "contended") if result == "ok" else (result,)
    return sum(metric(samples, "iowatch_probe_runs_total", probe=job, result=r) for r in results)


def skips(samples, job):
    return metric(samples, "iowatch_probe_skips_total", probe=job, reason="abandoned_io")


def check(r, d, throttle, disks):
    held, samples = d.scrape_until(lambda s: all(runs(s, e, "ok") >= 1 for e in ENGINES), 20)
    if not r.check(held, "a first run of each job completes", d.stderr()[-2000:]):
        return
    aio_before = aio_nr()
    throttle.confine(d.proc.pid)
    for disk in disks:
        throttle.limit(1, disk)
    held, samples = d.scrape_until(
        lambda s: all(skips(s, e) >= 1 for e in ENGINES), 30)
    r.check(held and metric(samples, "iowatch_probe_held_ios") > 0,
            f"the hung runs' I/Os are held: iowatch_probe_held_ios "
            f"{metric(samples, 'iowatch_probe_held_ios')}", d.stderr()[-2000:])
    r.check(d.stderr().count("no probe runs on it until they complete") == len(ENGINES),
            "the held I/Os are logged, once for each device")
    before = {e: skips(samples, e) for e in ENGINES}
    aio_held = aio_nr()
    held, samples = d.scrape_until(
        lambda s: all(skips(s, e) >= before[e] + 2 for e in ENGINES), 15)
    for e in ENGINES:
        r.check(held and runs(samples, e, "skipped") >= 2,
                f"{e}: while they are held, its slots are given up (skips {skips(samples, e)}, "
                f"skipped runs {runs(samples, e, 'skipped')})", d.stderr()[-2000:])
    r.check(aio_nr() == aio_held,
            f"no new AIO context meanwhile (fs.aio-nr {aio_held} -> {aio_nr()})")
    ok_before = {e: runs(samples, e, "ok") for e in ENGINES}
    for disk in disks:
        throttle.limit(None, disk)
    held, samples = d.scrape_until(
        lambda s: metric(s, "iowatch_probe_held_ios") == 0 and
        all(runs(s, e, "ok") > ok_before[e] for e in ENGINES), 20)
    r.check(held, "lifted, the I/Os complete, are freed, and both jobs run again "
            f"(ok runs {ok_before} -> { {e: runs(samples, e, 'ok') for e in ENGINES} })",
            d.stderr()[-2000:])
    r.check(aio_nr() == aio_before, f"fs.aio-nr back to {aio_before} ({aio_nr()})")
    r.check(d.stderr().count("probing resumes") == len(ENGINES),
            "the drain is logged, once for each device")


def main():
    daemon.exit_on_sigterm()
    daemon.require_root("throttling a cgroup's I/O and creating a loop device")
    daemon.own_mount_namespace()
    binary = sys.argv[1]
    r = daemon.Results()
    work = tempfile.mkdtemp(prefix="iowatch-hung-", dir="/var/tmp")
    try:
        with contextlib.ExitStack() as stack:
            filesystems = {e: stack.enter_context(daemon.Ext4OnLoop(
                os.path.join(work, f"{e}.img"), os.path.join(work, e), 64 << 20))
                for e in ENGINES}
            disks = [f"{os.major(os.stat(fs.loop).st_rdev)}:{os.minor(os.stat(fs.loop).st_rdev)}"
                     for fs in filesystems.values()]
            throttle = Throttle(disks[0])
            if not throttle.available():
                print("SKIP: no I/O throttling controller (cgroup v2 io or v1 blkio)")
                return 77
            directories = {e: os.path.join(fs.mnt, "probes") for e, fs in filesystems.items()}
            d = stack.enter_context(daemon.Daemon(binary, config=config(directories)))
            try:
                check(r, d, throttle, disks)
            finally:
                throttle.remove(d.proc.pid if d.alive() else None)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
