#!/usr/bin/python3
"""A real slowdown raises iowatch_probe_regression, and its end clears it (root).

`iowatch serve` probes a file under /var/tmp (psync 4k random reads, direct,
0.5 s every second), learns a baseline from 3 runs, then the block layer
throttles the daemon's reads of that disk: cgroup v2 `io.max riops=...` where
the io controller is on the unified hierarchy, else cgroup v1
`blkio.throttle.read_iops_device`. Checked, through scrapes:
1. before: baseline learned from 3 runs, regression 0 for read iops;
2. throttled: iowatch_probe_regression{metric="iops"} goes to 1 within
   hysteresis (2) + 2 runs, the ratio is far below 1, and the change is
   logged once with the numbers;
3. throttle removed: it returns to 0 within hysteresis + 2 runs, logged once;
4. `iowatch baseline show` (read-only, beside the running daemon) prints the
   baseline and the recent runs.
The cgroup is removed at the end whatever happens. Skips (77) when not root
or no I/O throttling controller is available.

Usage: serve_regression.py IOWATCH_BINARY
"""
import os
import subprocess
import sys
import tempfile
import time

import daemon

JOB = "e2e-regress"
HYSTERESIS = 2
MAX_THROTTLED_IOPS = 40


def throttled_iops(baseline_iops):
    """The read IOPS a slowdown test holds the probe at: a fifth of what it measured, at most
    MAX_THROTTLED_IOPS. A fixed cap assumes the disk's speed: this VM's loop device read
    170-210 IOPS at depth 1 while the machine compiled, and a cap near that would not slow it."""
    return max(5, min(MAX_THROTTLED_IOPS, int(baseline_iops / 5)))
CONFIG = daemon.one_probe_config(JOB, runtime="500ms",
                                 baseline=daemon.mechanism_baseline(HYSTERESIS))


def whole_disk(dev):
    """major:minor of the disk holding `dev` (throttling takes whole disks, not partitions)."""
    sys_dir = os.path.realpath(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    if os.path.exists(os.path.join(sys_dir, "partition")):
        sys_dir = os.path.dirname(sys_dir)
    with open(os.path.join(sys_dir, "dev")) as f:
        return f.read().strip()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class Throttle:
    """Limits the read IOPS of one process on one disk through a cgroup of its own."""

    def __init__(self, disk):
        self.disk, self.dir, self.root = disk, None, None
        v2 = "/sys/fs/cgroup"
        if os.path.exists(f"{v2}/cgroup.controllers"):
            with open(f"{v2}/cgroup.controllers") as f:
                if "io" in f.read().split():
                    self.kind, self.root = "v2", v2
        if self.root is None and os.path.exists("/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device"):
            self.kind, self.root = "v1", "/sys/fs/cgroup/blkio"

    def available(self):
        return self.root is not None

    def confine(self, pid):
        self.dir = tempfile.mkdtemp(prefix="iowatch-e2e-", dir=self.root)
        if self.kind == "v2":
            with open(f"{self.root}/cgroup.subtree_control") as f:
                if "io" not in f.read().split():
                    write(f"{self.root}/cgroup.subtree_control", "+io")
        write(f"{self.dir}/cgroup.procs", str(pid))  # the whole process, every thread

    def limit(self, iops, disk=None):
        """iops None lifts the limit; `disk` ("MAJ:MIN") another disk than the one given."""
        disk = disk or self.disk
        if self.kind == "v2":
            write(f"{self.dir}/io.max", f"{disk} riops={iops or 'max'}")
        else:
            write(f"{self.dir}/blkio.throttle.read_iops_device", f"{disk} {iops or 0}")

    def remove(self, pid):
        if self.dir is None:
            return
        try:
            if pid is not None:
                write(f"{self.root}/cgroup.procs", str(pid))
        except OSError:
            pass  # the process is gone
        for _ in range(50):
            try:
                os.rmdir(self.dir)
                return
            except OSError:
                time.sleep(0.1)


def regression(samples):
    v = daemon.values(samples, "iowatch_probe_regression", probe=JOB, op="read", metric="iops")
    return v[0] if v else None


def ok_runs(samples):
    return daemon.completed_runs(samples, JOB)


def wait_for(d, predicate, runs, what):
    """Scrapes until predicate(samples) or `runs` more ok runs passed; (ok, samples, runs taken)."""
    samples = d.scrape()
    start = ok_runs(samples)
    deadline = time.monotonic() + 10 + 3 * runs
    while time.monotonic() < deadline and d.alive():
        if predicate(samples):
            return True, samples, int(ok_runs(samples) - start)
        if ok_runs(samples) - start > runs:
            break
        time.sleep(0.2)
        samples = d.scrape()
    print(f"     waited for {what}: {ok_runs(samples) - start} runs")
    return False, samples, ok_runs(samples) - start


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    daemon.require_root("throttling a cgroup's I/O")
    tempfile.tempdir = "/var/tmp"
    r = daemon.Results()
    with daemon.Daemon(sys.argv[1], config=CONFIG) as d:
        disk = whole_disk(os.stat(d.dir).st_dev)
        throttle = Throttle(disk)
        if not throttle.available():
            print("SKIP: no I/O throttling controller (cgroup v2 io or v1 blkio)")
            return 77
        try:
            ok, samples, _ = wait_for(
                d, lambda s: daemon.values(s, "iowatch_probe_baseline_runs", probe=JOB) == [3]
                and regression(s) == 0, 8, "a baseline")
            r.check(ok, "baseline learned from 3 runs, regression 0",
                    f"{[x for x in samples if x[0].startswith('iowatch_probe_')][:40]}\n"
                    f"{d.stderr()[-3000:]}")
            base_iops = daemon.values(samples, "iowatch_probe_baseline_value", probe=JOB, op="read",
                                      metric="iops")
            slowed = throttled_iops(base_iops[0] if base_iops else 0)
            r.check(base_iops and base_iops[0] >= 4 * slowed,
                    f"baseline iops well above the throttle of {slowed} ({base_iops})")

            throttle.confine(d.proc.pid)
            throttle.limit(slowed)
            print(f"note: {throttle.kind} throttle: {disk} {slowed} read IOPS")
            ok, samples, took = wait_for(d, lambda s: regression(s) == 1, HYSTERESIS + 2,
                                         "the regression")
            r.check(ok, f"throttled: regression 1 within {HYSTERESIS} + 2 runs (took {took})",
                    d.stderr()[-3000:])
            ratio = daemon.values(samples, "iowatch_probe_baseline_ratio", probe=JOB, op="read",
                                  metric="iops")
            r.check(ratio and ratio[0] < 0.5, f"throttled: iops ratio far below 1 ({ratio})")
            raised = [l for l in d.stderr().splitlines() if "read iops regressed" in l]
            r.check(len(raised) == 1 and "baseline of" in raised[0],
                    "the regression is logged once, with the numbers", "\n".join(raised))

            throttle.limit(None)
            ok, samples, took = wait_for(d, lambda s: regression(s) == 0, HYSTERESIS + 2,
                                         "the recovery")
            r.check(ok, f"throttle lifted: regression 0 within {HYSTERESIS} + 2 runs (took {took})",
                    d.stderr()[-3000:])
            cleared = [l for l in d.stderr().splitlines() if "read iops recovered" in l]
            r.check(len(cleared) == 1, "the recovery is logged once", "\n".join(cleared))

            # Judged with the daemon's own policy (its config), as the daemon judged them.
            show = subprocess.run([d.binary, "baseline", f"--state.dir={d.dir}/state",
                                   f"--config.file={d.config_file}", "show", JOB],
                                  capture_output=True, text=True, timeout=30)
            r.check(show.returncode == 0 and JOB in show.stdout and "read IOPS" in show.stdout and "baseline: learned" in show.stdout,
                    "`iowatch baseline show` beside the running daemon",
                    f"exit {show.returncode}\n{show.stdout}\n{show.stderr}")
            print(show.stdout)
        finally:
            throttle.remove(d.proc.pid if d.alive() else None)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
