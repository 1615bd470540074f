#!/usr/bin/python3
"""`iowatch serve` runs its probe jobs and exports them (live system, real I/O).

A config with two tiny jobs (psync, direct, 4 MiB file, 1 s runtime, every 3 s,
baseline from 2 runs) and a state directory under /var/tmp (O_DIRECT works
there; /tmp may be tmpfs):
1. within ~25 s both jobs have ok runs, IOPS, a completion latency histogram
   (cumulative, +Inf = _count) and a baseline with its ratio and regression
   series; the store is up; `promtool check metrics` is clean (when installed);
2. the SQLite file holds the runs of both jobs and passes integrity_check;
3. SIGTERM while a probe runs (iowatch_probe_running 1): exit 0 within 2 s,
   the database still consistent, and no run stored after the signal.

Usage: serve_probes.py IOWATCH_BINARY
"""
import os
import shutil
import sqlite3
import sys
import tempfile
import time

import daemon

JOBS = ("e2e-randread", "e2e-randwrite")
CONFIG = """\
probes:
  enabled: true
  busy_threshold: 1
  baseline:
    runs: 2
    min_age: 0s
    # Baselines whatever CI's other tests do on the disk (classification: unit tests
    # and tests/bench/verdicts).
    contention: {min_foreign_load: 1e9, max_cpu_wait: 1, max_cpu_steal: 1}
  defaults:
    every: 3s
    jitter: 0s
    timeout: 10s
    options:
      directory: probes
      size: 4M
      ioengine: psync
      direct: 1
      runtime: 1s
      time_based: 1
  jobs:
    - name: e2e-randread
      options: {rw: randread, bs: 4k, iodepth: 1}
    - name: e2e-randwrite
      options: {rw: randwrite, bs: 4k, iodepth: 1}
"""


def ok_runs(samples, job):
    return daemon.completed_runs(samples, job)


def ready(samples):
    return all(ok_runs(samples, job) >= 3 and
               daemon.values(samples, "iowatch_probe_baseline_runs", probe=job) for job in JOBS)


def db_runs(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
        counts = dict(con.execute("SELECT job, COUNT(*) FROM runs GROUP BY job").fetchall())
        partial = con.execute("SELECT COUNT(*) FROM runs WHERE result != 'ok' "
                              "OR run_end != 'completed'").fetchone()[0]
        return integrity, counts, partial
    finally:
        con.close()


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    tempfile.tempdir = "/var/tmp"
    r = daemon.Results()
    with daemon.Daemon(sys.argv[1], config=CONFIG) as d:
        db = os.path.join(d.dir, "state", "iowatch.db")
        samples, deadline = d.scrape(), time.monotonic() + 30
        while not ready(samples) and time.monotonic() < deadline and d.alive():
            time.sleep(0.5)
            samples = d.scrape()
        for job in JOBS:
            r.check(ok_runs(samples, job) >= 3, f"{job}: at least 3 ok runs within 30 s",
                    f"runs: {[(l, v) for n, l, v in samples if n == 'iowatch_probe_runs_total']}"
                    f"\n{d.stderr()[-3000:]}")
            r.check(daemon.values(samples, "iowatch_probe_runs_total", probe=job, result="error")
                    == [0], f"{job}: no error runs")
            op = "read" if "read" in job else "write"
            iops = daemon.values(samples, "iowatch_probe_iops", probe=job, op=op)
            r.check(iops and iops[0] > 0, f"{job}: iowatch_probe_iops > 0", str(iops))
            buckets = [(l["le"], v) for n, l, v in samples
                       if n == "iowatch_probe_clat_seconds_bucket" and l.get("probe") == job]
            counts = [v for _, v in buckets]
            total = daemon.values(samples, "iowatch_probe_clat_seconds_count", probe=job, op=op)
            r.check(len(buckets) == 20 and counts == sorted(counts) and buckets[-1][0] == "+Inf"
                    and total and counts[-1] == total[0] > 0,
                    f"{job}: clat histogram cumulative, 20 buckets, +Inf = _count", str(buckets))
            r.check(daemon.values(samples, "iowatch_probe_baseline_runs", probe=job) == [2],
                    f"{job}: baseline learned from 2 runs")
            r.check(daemon.values(samples, "iowatch_probe_regression", probe=job, op=op,
                                  metric="iops") in ([0], [1]),
                    f"{job}: regression series for iops")
            r.check(daemon.values(samples, "iowatch_probe_baseline_ratio", probe=job, op=op,
                                  metric="iops"), f"{job}: ratio series for iops")
        r.check(daemon.values(samples, "iowatch_probe_store_up") == [1], "store up")
        r.check(daemon.values(samples, "iowatch_probe_store_errors_total") == [0], "no store errors")
        r.check(daemon.values(samples, "iowatch_probe_running"), "iowatch_probe_running exported")
        if shutil.which("promtool"):
            ok, out = daemon.promtool_check(d.get("/metrics")[2].decode())
            r.check(ok, "promtool check metrics is clean", out)
        else:
            print("note: promtool not installed, exposition lint not run")

        integrity, counts, _ = db_runs(db)
        r.check(integrity == "ok", "database integrity_check ok", integrity)
        for job in JOBS:
            r.check(counts.get(job, 0) >= 3, f"{job}: runs in the SQLite file", str(counts))

        # SIGTERM in the middle of a probe.
        running, deadline = False, time.monotonic() + 15
        while not running and time.monotonic() < deadline:
            running = any(v == 1 for v in daemon.values(d.scrape(), "iowatch_probe_running"))
            if not running:
                time.sleep(0.05)
        r.check(running, "a probe seen running")
        code, seconds = d.stop()
        r.check(code == 0, "SIGTERM during a probe: exit 0", f"exit {code}\n{d.stderr()[-2000:]}")
        r.check(seconds < 2, f"SIGTERM during a probe: exit within 2 s ({seconds:.2f} s)")
        integrity, _, partial = db_runs(db)
        r.check(integrity == "ok", "database integrity_check ok after SIGTERM", integrity)
        r.check(partial == 0, "the cancelled run was not stored (only completed ok runs)",
                f"{partial} other runs")
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
