#!/usr/bin/python3
"""The wall clock jumps an hour forwards, then backwards, under a running daemon (root).

`iowatch serve` samples the real /proc and runs a probe job every second
(psync, direct, under /var/tmp). The script sets CLOCK_REALTIME an hour ahead,
then an hour behind, as a bad NTP step or an operator's `date -s` does, while
samples are taken and probes run, and restores it at the end (to the start
time plus the monotonic time elapsed). After each jump, for 8 s (a run takes the load window before it too):
1. /healthz stays 200 and iowatch_sample_age_seconds stays within 0..10 s:
   ages are measured on the monotonic clock (with the wall clock, a jump
   forward made every sample "stale": /healthz 503 and the systemd watchdog
   unfed, so the daemon was restarted; a jump back hid a stalled sampler);
2. every iostat utilisation is a finite number in 0..1 (rates come from
   /proc/uptime and the counters, never from the wall clock);
3. probe runs go on, ok, with a latency (lat mean) of a sane size (< 1 s)
   and IOPS > 0: durations are measured on the monotonic clock.

Usage: serve_clock_jump.py IOWATCH_BINARY
"""
import math
import sys
import tempfile
import time

import daemon

JOB = "e2e-clock"
CONFIG = daemon.one_probe_config(JOB)


def ok_runs(samples):
    return daemon.completed_runs(samples, JOB)


def check_window(r, d, label, seconds=8.0):
    """Scrapes for `seconds`; every check must hold in every scrape."""
    start_runs = ok_runs(d.scrape())
    healthy, ages, utils_ok, lat_ok = True, [], True, True
    end = time.monotonic() + seconds
    samples = []
    while time.monotonic() < end:
        status = d.get("/healthz")[0]
        healthy = healthy and status == 200
        samples = d.scrape()
        ages += daemon.values(samples, "iowatch_sample_age_seconds")
        for value in daemon.values(samples, "iowatch_iostat_utilization_ratio"):
            utils_ok = utils_ok and math.isfinite(value) and 0 <= value <= 1
        for value in daemon.values(samples, "iowatch_probe_lat_mean_seconds", probe=JOB):
            lat_ok = lat_ok and math.isfinite(value) and 0 < value < 1
        time.sleep(0.25)
    r.check(healthy, f"{label}: /healthz 200 throughout", d.stderr()[-1500:])
    r.check(ages and all(0 <= a <= 10 for a in ages),
            f"{label}: sample age within 0..10 s (max {max(ages) if ages else None})")
    r.check(utils_ok, f"{label}: every iostat utilisation finite, in 0..1")
    r.check(lat_ok, f"{label}: probe latency finite, under 1 s")
    runs = ok_runs(samples) - start_runs
    iops = daemon.values(samples, "iowatch_probe_iops", probe=JOB, op="read")
    r.check(runs >= 2 and iops and iops[0] > 0, f"{label}: probe runs go on ({runs} ok runs, "
            f"IOPS {iops})")


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    daemon.require_root("setting the clock")
    tempfile.tempdir = "/var/tmp"
    r = daemon.Results()
    wall0, mono0 = time.time(), time.monotonic()

    def restore():
        time.clock_settime(time.CLOCK_REALTIME, wall0 + (time.monotonic() - mono0))

    try:
        with daemon.Daemon(sys.argv[1], config=CONFIG) as d:
            deadline = time.monotonic() + 20
            while ok_runs(d.scrape()) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            check_window(r, d, "before")
            time.clock_settime(time.CLOCK_REALTIME, time.time() + 3600)
            check_window(r, d, "an hour ahead")
            time.clock_settime(time.CLOCK_REALTIME, time.time() - 7200)
            check_window(r, d, "an hour behind")
            restore()
            check_window(r, d, "restored")
    finally:
        restore()
    print(f"note: clock restored, off by {time.time() - (wall0 + time.monotonic() - mono0):+.3f} s")
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
