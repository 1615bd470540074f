#!/usr/bin/python3
"""A probe run on a device that stops answering leaves its I/O behind, and the daemon neither
leaks it nor probes the device again until it is answered (root, I/O throttling).

`iowatch serve` probes a file on ext4 on a loop device (direct 4k random reads at QD32, every
2 s, 3 s time limit), once with libaio and once with io_uring. After a first completed run the
block layer throttles the daemon's reads of that disk to 1 a second (cgroup v2 `io.max riops=1`,
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
import os
import shutil
import sys
import tempfile
import time

import daemon
from serve_regression import Throttle

JOB = "hung"


def config(directory, engine):
    return f"""\
probes:
  enabled: true
  busy_threshold: 1
  baseline:
{daemon.HOST_BLIND}  jobs:
    - name: {JOB}
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
"""


def aio_nr():
    with open("/proc/sys/fs/aio-nr") as f:
        return int(f.read())


def metric(samples, name, **labels):
    v = daemon.values(samples, name, **labels)
    return v[0] if v else 0


def runs(samples, result):
    return metric(samples, "iowatch_probe_runs_total", probe=JOB, result=result)


def check_engine(r, binary, work, engine):
    with daemon.Ext4OnLoop(os.path.join(work, f"{engine}.img"), os.path.join(work, engine),
                           64 << 20) as fs, \
            daemon.Daemon(binary, config=config(os.path.join(fs.mnt, "probes"), engine)) as d:
        disk = f"{os.major(os.stat(fs.loop).st_rdev)}:{os.minor(os.stat(fs.loop).st_rdev)}"
        throttle = Throttle(disk)
        if not throttle.available():
            print("SKIP: no I/O throttling controller (cgroup v2 io or v1 blkio)")
            sys.exit(77)
        try:
            held, samples = d.scrape_until(lambda s: runs(s, "ok") >= 1, 20)
            if not r.check(held, f"{engine}: a first run completes", d.stderr()[-2000:]):
                return
            aio_before = aio_nr()
            throttle.confine(d.proc.pid)
            throttle.limit(1)
            held, samples = d.scrape_until(
                lambda s: metric(s, "iowatch_probe_held_ios") > 0, 30)
            r.check(held, f"{engine}: the hung run's I/Os are held: "
                    f"iowatch_probe_held_ios {metric(samples, 'iowatch_probe_held_ios')}",
                    d.stderr()[-2000:])
            r.check("no probe runs on it until they complete" in d.stderr(),
                    f"{engine}: the held I/Os are logged")
            skips = metric(samples, "iowatch_probe_skips_total", probe=JOB, reason="abandoned_io")
            aio_held = aio_nr()
            held, samples = d.scrape_until(
                lambda s: metric(s, "iowatch_probe_skips_total", probe=JOB,
                                 reason="abandoned_io") >= skips + 2, 15)
            r.check(held and runs(samples, "skipped") >= 2,
                    f"{engine}: while they are held, slots are given up "
                    f"(skips {metric(samples, 'iowatch_probe_skips_total', probe=JOB, reason='abandoned_io')}, "
                    f"skipped runs {runs(samples, 'skipped')})", d.stderr()[-2000:])
            r.check(aio_nr() == aio_held,
                    f"{engine}: no new AIO context meanwhile (fs.aio-nr {aio_held} -> {aio_nr()})")
            ok_before = runs(samples, "ok")
            throttle.limit(None)
            held, samples = d.scrape_until(
                lambda s: metric(s, "iowatch_probe_held_ios") == 0 and runs(s, "ok") > ok_before,
                20)
            r.check(held, f"{engine}: lifted, the I/Os complete, are freed, and the job runs "
                    f"again (ok runs {ok_before} -> {runs(samples, 'ok')})", d.stderr()[-2000:])
            r.check(aio_nr() == aio_before,
                    f"{engine}: fs.aio-nr back to {aio_before} ({aio_nr()})")
            r.check("probing resumes" in d.stderr(), f"{engine}: the drain is logged")
        finally:
            throttle.remove(d.proc.pid if d.alive() else None)


def main():
    daemon.exit_on_sigterm()
    daemon.require_root("throttling a cgroup's I/O and creating a loop device")
    binary = sys.argv[1]
    r = daemon.Results()
    work = tempfile.mkdtemp(prefix="iowatch-hung-", dir="/var/tmp")
    try:
        for engine in ("libaio", "io_uring"):
            check_engine(r, binary, work, engine)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
