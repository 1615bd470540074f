#!/usr/bin/python3
"""A collector whose reads never return delays neither the samples nor the scrapes (root).

The procfs root is a copy of tests/fixtures/metrics-two-samples/s1/proc whose pressure/
directory is a FUSE file system that never answers a read (stuck_fuse.py). The daemon samples
every second with the default read deadline (half the interval), on its own thread. Checked:
samples keep coming
every second, every scrape answers within a second (they take milliseconds), the pressure
collector reads 0 with a message and a growing iowatch_collector_timeouts_total while the
disk, vmstat and cgroup collectors read 1, only one read was ever sent to the stuck file (a
stuck source is not asked again while its read is pending), and SIGTERM still stops the
daemon at once. Then the file system goes away (the pending read fails): the collector stops
timing out and reports why it fails.

Usage: serve_stuck_collector.py IOWATCH_BINARY
"""
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback

import daemon
from stuck_fuse import StuckFuse

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(os.path.dirname(os.path.dirname(HERE)),
                       "tests/fixtures/metrics-two-samples/s1")


def timed_scrape(d):
    start = time.monotonic()
    samples = d.scrape()
    return samples, time.monotonic() - start


def main():
    daemon.require_root("mounting a FUSE file system")
    daemon.exit_on_sigterm()
    binary = sys.argv[1]
    r = daemon.Results()
    work = tempfile.mkdtemp(prefix="iowatch-stuck-")
    fuse = None
    try:
        procfs = os.path.join(work, "proc")
        shutil.copytree(os.path.join(FIXTURE, "proc"), procfs)
        shutil.rmtree(os.path.join(procfs, "pressure"), ignore_errors=True)
        fuse = StuckFuse(os.path.join(procfs, "pressure"), ["cpu", "io", "memory"])
        config = "probes:\n  enabled: false\nsampling:\n  interval: 1s\n"
        with daemon.Daemon(binary, config=config, procfs=procfs,
                           sysfs=os.path.join(FIXTURE, "sys")) as d:
            first, _ = timed_scrape(d)
            time.sleep(4.2)
            worst, timestamps, last = 0.0, set(), first
            for _ in range(10):
                last, seconds = timed_scrape(d)
                worst = max(worst, seconds)
                timestamps.update(daemon.values(last, "iowatch_sample_timestamp_seconds"))
                time.sleep(0.1)
            r.check(worst < 1.0, f"every scrape answers within a second (worst {worst:.3f} s)")
            start_ts = daemon.values(first, "iowatch_sample_timestamp_seconds")[0]
            now_ts = daemon.values(last, "iowatch_sample_timestamp_seconds")[0]
            r.check(now_ts - start_ts >= 4, f"samples keep coming ({now_ts - start_ts:.1f} s "
                    "of samples in 5.2 s)")
            success = {l["collector"]: v for n, l, v in last if n == "iowatch_collector_success"}
            r.check(success.get("pressure") == 0, f"pressure reads 0 ({success})")
            r.check(all(success.get(c) == 1 for c in ("diskstats", "stat", "meminfo", "vmstat")),
                    f"the other sources read 1 ({success})")
            timeouts = daemon.values(last, "iowatch_collector_timeouts_total",
                                     collector="pressure")
            r.check(timeouts and timeouts[0] >= 4, f"pressure timeouts counted ({timeouts})")
            r.check(fuse.reads == 1, f"the stuck file got one read, not one per sample "
                    f"({fuse.reads})")
            r.check("stuck" in d.stderr() and "pressure" in d.stderr(),
                    "the log says the pressure collector is stuck", d.stderr()[-2000:])
            fuse.close()
            time.sleep(2.5)  # the pending read fails; the next sample asks again
            settled = d.scrape()
            time.sleep(2.5)
            later = d.scrape()
            counts = [daemon.values(x, "iowatch_collector_timeouts_total", collector="pressure")
                      for x in (settled, later)]
            # 2.5 s hold two or three samples of the 1 s schedule, as the scrapes fall against
            # it; two (2 s of timestamps, 1.5 allowing for jitter) show the timeouts stopped.
            advanced = (daemon.values(later, "iowatch_sample_timestamp_seconds")[0] -
                        daemon.values(settled, "iowatch_sample_timestamp_seconds")[0])
            r.check(counts[0] == counts[1] and advanced >= 1.5,
                    f"with the file system gone, the read returns and timeouts stop ({counts} "
                    f"over {advanced:.1f} s of samples)")
            code, seconds = d.stop(signal.SIGTERM, timeout=5)
            r.check(code == 0 and seconds < 3, f"SIGTERM stops the daemon ({code} in {seconds:.2f} s)")
    except Exception:
        traceback.print_exc()
        r.check(False, "no exception")
    finally:
        if fuse:
            fuse.close()
        shutil.rmtree(work, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
