#!/usr/bin/python3
"""The alert path end to end (root): a real slowdown of a real device under a probe job, through
the Debian `prometheus` server and `prometheus-alertmanager` to a webhook receiver here.

- The device: ext4 on a loop device (direct I/O), the probe job on it every second (a 4 MiB
  file, 4k random direct reads, 300 ms), its baseline learned from 3 runs, hysteresis 2.
- Prometheus: deploy/prometheus/scrape.yml and alerts.yml, 1 s scrape and evaluation, sending
  to the Alertmanager. Alertmanager: deploy/alertmanager/alertmanager.yml as shipped, but the
  receiver's URL and its group_wait and group_interval (30 s and 5 min there, 1 s here).
1. The daemon's reads of the loop device are throttled (its cgroup's io.max, or blkio): the
   receiver gets IowatchProbeRegression firing (IOPS, or the mean latency when the IOPS
   baseline's runs were too noisy to see it first), with instance, probe, op, metric and device
   labels, and annotations that explain it with the daemon's own figures: the description
   quotes a ratio to the baseline the daemon exported while throttled, `since` the first bad
   run's start (iowatch_probe_regression_since_timestamp_seconds, after the throttle began),
   `baseline` the baseline's runs' range (iowatch_probe_baseline_{first,last}_run_timestamp_
   seconds) and `disk` the loop device; the time from the throttle to the notification is
   printed with its parts (the daemon's raise, Prometheus's scrape and rule evaluation,
   Alertmanager's group_wait).
2. The throttle lifted: the same alert `resolved`.
3. The probe's file removed and its directory made immutable, so that no run succeeds:
   IowatchProbeStale firing (its grace of 10 minutes beyond three intervals made 2 s here).
4. The daemon killed: IowatchDown firing (its `for: 5m` shortened to 5 s here; in production
   that `for:` is what it adds).

Usage: alert_path.py IOWATCH_BINARY SOURCE_DIR
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from datetime import datetime, timezone

import daemon
import promstack
from serve_regression import Throttle, throttled_iops

JOB = "e2e-alert"
HYSTERESIS = 2


def config(directory):
    # Loop devices are excluded by default: this one is the disk under test.
    return "devices:\n  exclude: \"\"\n" + daemon.one_probe_config(
        JOB, directory=directory, runtime="300ms", baseline=daemon.mechanism_baseline(HYSTERESIS))


def alert_rules(deploy, work):
    """alerts.yml with IowatchDown's `for: 5m` made 5 s, and IowatchProbeStale's 10 minutes of
    grace beyond three intervals made 2 s."""
    with open(os.path.join(deploy, "prometheus", "alerts.yml")) as f:
        text = f.read()
    down = text.index("alert: IowatchDown")
    end = text.index("for: 5m", down)
    text = text[:end] + "for: 5s" + text[end + len("for: 5m"):]
    grace = "> 3 * iowatch_probe_interval_seconds + 600"
    if grace not in text:
        raise RuntimeError(f"alerts.yml: IowatchProbeStale no longer reads '{grace}'")
    with open(os.path.join(work, "alerts.yml"), "w") as f:
        f.write(text.replace(grace, "> 3 * iowatch_probe_interval_seconds + 2"))


def firing_in_prometheus(port, alertname):
    try:
        alerts = promstack.api(port, "/api/v1/alerts")["alerts"]
    except (OSError, RuntimeError):
        return False
    return any(a["labels"].get("alertname") == alertname and a["state"] == "firing"
               for a in alerts)


def regression_raised(d, ratios):
    """The read metrics the daemon has regressed; adds each ratio it exports to `ratios`
    (metric -> the ratios seen, rounded as the alert prints them)."""
    try:
        samples = d.scrape()
    except OSError:
        return set()
    raised = set()
    for name, labels, value in samples:
        if labels.get("probe") != JOB or labels.get("op") != "read":
            continue
        if name == "iowatch_probe_baseline_ratio":
            ratios.setdefault(labels["metric"], set()).add(round(value, 2))
        elif name == "iowatch_probe_regression" and value == 1:
            raised.add(labels["metric"])
    return raised


# Prometheus's humanizeTimestamp: Go's time.Time in UTC, "2026-12-05 00:40:12.345 +0000 UTC".
GO_TIME = r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) \+0000 UTC"
# It cuts the seconds to whole milliseconds, so the double nearest 1796582428.825 may read
# 28.824: a quoted time is up to a millisecond (and a float's hair) below the daemon's.
QUOTED_TIME_SLACK = 0.0015


def go_times(text):
    """The seconds since the epoch of each humanized timestamp in `text`, in order."""
    out = []
    for stamp in re.findall(GO_TIME, text):
        fmt = "%Y-%m-%d %H:%M:%S.%f" if "." in stamp else "%Y-%m-%d %H:%M:%S"
        out.append(datetime.strptime(stamp, fmt).replace(tzinfo=timezone.utc).timestamp())
    return out


def check_explained(r, alert, d, ratios, throttled_at, device):
    """The firing alert's annotations against the daemon's figures: the ratio is one it
    exported while throttled (worse: below 0.5 for a throughput, above 2 for a latency), the
    start is its first bad run (after the throttle), the range its baseline's."""
    annotations = alert["annotations"]
    metric = alert["labels"].get("metric", "")
    description = annotations.get("description", "")
    quoted = re.search(r"at (\d+\.\d\d)× its baseline", description)
    seen = ratios.get(metric, set())
    ratio = float(quoted.group(1)) if quoted else None
    worse = ratio is not None and (ratio > 2 if "seconds" in metric else ratio < 0.5)
    r.check(ratio in seen and worse,
            f"its description quotes a worse {metric} ratio the daemon exported "
            f"(one of {sorted(seen)})", description)
    samples = d.scrape()
    since = daemon.values(samples, "iowatch_probe_regression_since_timestamp_seconds",
                          probe=JOB, op="read", metric=metric)
    quoted_since = go_times(annotations.get("since", ""))
    r.check(since and quoted_since and abs(quoted_since[0] - since[0]) < QUOTED_TIME_SLACK
            and throttled_at - 2 <= since[0] <= time.time(),
            f"`since` is the daemon's first bad run ({since}), after the throttle "
            f"({throttled_at:.3f})", annotations.get("since", ""))
    first = daemon.values(samples, "iowatch_probe_baseline_first_run_timestamp_seconds", probe=JOB)
    last = daemon.values(samples, "iowatch_probe_baseline_last_run_timestamp_seconds", probe=JOB)
    quoted_range = go_times(annotations.get("baseline", ""))
    r.check(first and last and len(quoted_range) == 2 and first[0] < last[0] < throttled_at
            and abs(quoted_range[0] - first[0]) < QUOTED_TIME_SLACK
            and abs(quoted_range[1] - last[0]) < QUOTED_TIME_SLACK,
            f"`baseline` gives the baseline's runs' range ({first} to {last})",
            annotations.get("baseline", ""))
    r.check(annotations.get("disk", "").startswith(f"On {device} since the first bad run: "),
            "`disk` says what else its disk did since then", annotations.get("disk", ""))
    for key in ("description", "since", "baseline", "disk"):
        print(f"note: {key}: {annotations.get(key, '')}")


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    daemon.require_root("a loop device and throttling a cgroup's I/O")
    daemon.own_mount_namespace()
    if daemon.missing_tools("prometheus", "prometheus-alertmanager", "amtool"):
        return 1
    deploy = os.path.join(sys.argv[2], "deploy")
    tempfile.tempdir = "/var/tmp"
    r = daemon.Results()
    work = tempfile.mkdtemp(prefix="iowatch-e2e-alerts-")
    receiver = promstack.Receiver()
    throttle, d = None, None
    try:
        check = subprocess.run(["amtool", "check-config",
                                os.path.join(deploy, "alertmanager", "alertmanager.yml")],
                               capture_output=True, text=True, timeout=60)
        r.check(check.returncode == 0, "amtool check-config accepts the shipped alertmanager.yml",
                check.stdout + check.stderr)
        with daemon.Ext4OnLoop(os.path.join(work, "disk.img"), os.path.join(work, "mnt"),
                               64 << 20, direct_io=True) as disk, \
                promstack.alertmanager(work, promstack.alertmanager_config(deploy, receiver.port)) as am:
            rdev = os.stat(disk.loop).st_rdev
            throttle = Throttle(f"{os.major(rdev)}:{os.minor(rdev)}")
            if not throttle.available():
                print("SKIP: no I/O throttling controller (cgroup v2 io or v1 blkio)")
                return 77
            d = daemon.Daemon(sys.argv[1], config=config(disk.mnt)).start()
            instance = f"127.0.0.1:{d.port}"
            alert_rules(deploy, work)
            prom_config = (
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "rule_files:\n  - alerts.yml\n"
                "alerting:\n  alertmanagers:\n    - static_configs:\n"
                f"        - targets: ['127.0.0.1:{am.port}']\n"
                + promstack.scrape_config(deploy, instance))
            with promstack.prometheus(work, prom_config) as prom:
                deadline, ready = time.monotonic() + 60, False
                while time.monotonic() < deadline and not ready:
                    time.sleep(0.5)
                    try:
                        samples = d.scrape()
                        ready = (daemon.values(samples, "iowatch_probe_baseline_runs",
                                               probe=JOB) == [3]
                                 and promstack.query(prom.port, 'up{job="iowatch"} == 1'))
                    except (OSError, RuntimeError):
                        ready = False
                r.check(ready, "baseline learned and Prometheus scraping",
                        prom.log()[-2000:] + d.stderr()[-2000:])

                # 1. The slowdown, to a notification: a cap that binds, whatever this disk does.
                base = daemon.values(d.scrape(), "iowatch_probe_baseline_value", probe=JOB,
                                     op="read", metric="iops")
                slowed = throttled_iops(base[0] if base else 0)
                r.check(base and base[0] >= 4 * slowed,
                        f"baseline iops well above the throttle of {slowed} ({base})")
                throttle.confine(d.proc.pid)
                throttled_at = time.time()
                throttle.limit(slowed)
                t0 = time.monotonic()
                raised_at = firing_at = None
                ratios = {}
                deadline = t0 + 60
                while time.monotonic() < deadline and not receiver.alerts(
                        "IowatchProbeRegression", "firing", t0, probe=JOB):
                    if regression_raised(d, ratios) and raised_at is None:
                        raised_at = time.monotonic()
                    if firing_at is None and firing_in_prometheus(prom.port,
                                                                  "IowatchProbeRegression"):
                        firing_at = time.monotonic()
                    time.sleep(0.1)
                # The throttle makes every read slower and fewer: IOPS (and MiB/s) fall and the
                # mean latency rises. Which the daemon raises first depends on how noisy its
                # three baseline runs were (a baseline learned beside other work has a wide
                # spread), so the first alert of the probe is the one followed.
                got = receiver.wait("IowatchProbeRegression", "firing", t0, 1, probe=JOB)
                samples = d.scrape()
                r.check(got, "the receiver got IowatchProbeRegression firing for the probe",
                        f"baseline {[(l, v) for n, l, v in samples if n.startswith('iowatch_probe_baseline_')][:12]}\n"
                        + prom.log()[-2000:] + am.log()[-2000:] + d.stderr()[-2000:])
                metric = got[1]["labels"].get("metric") if got else "iops"
                if got:
                    at, alert = got
                    labels = alert["labels"]
                    r.check(labels.get("instance") == instance and labels.get("probe") == JOB
                            and labels.get("op") == "read" and metric in ratios
                            and labels.get("device") == os.path.basename(disk.loop),
                            f"its labels name the host, probe, op, a metric the daemon judges "
                            f"and the device ({labels})")
                    check_explained(r, alert, d, ratios, throttled_at,
                                    os.path.basename(disk.loop))
                    parts = [f"throttle → notification {at - t0:.1f} s"]
                    if raised_at:
                        parts.append(f"the daemon raised it after {raised_at - t0:.1f} s "
                                     f"(hysteresis {HYSTERESIS} × every 1 s, plus the run "
                                     f"in progress)")
                    if raised_at and firing_at:
                        parts.append(f"Prometheus fired {firing_at - raised_at:.1f} s later "
                                     "(1 s scrape + 1 s evaluation, no `for:`)")
                    if firing_at:
                        parts.append(f"Alertmanager notified {at - firing_at:.1f} s after "
                                     "(group_wait 1 s)")
                    print("note: " + "; ".join(parts))

                # 2. The slowdown ends.
                throttle.limit(None)
                t1 = time.monotonic()
                got = receiver.wait("IowatchProbeRegression", "resolved", t1, 60, probe=JOB,
                                    metric=metric)
                r.check(got, "the receiver got IowatchProbeRegression resolved",
                        am.log()[-2000:] + d.stderr()[-2000:])
                if got:
                    print(f"note: throttle lifted → resolved {got[0] - t1:.1f} s")

                # 3. The probe can no longer run: its file gone and its directory immutable.
                t_stale = time.monotonic()
                os.remove(os.path.join(disk.mnt, f"{JOB}.0.0"))
                subprocess.run(["chattr", "+i", disk.mnt], check=True)
                try:
                    got = receiver.wait("IowatchProbeStale", "firing", t_stale, 60, probe=JOB)
                finally:
                    subprocess.run(["chattr", "-i", disk.mnt], check=False)
                r.check(got and got[1]["labels"].get("instance") == instance,
                        "the receiver got IowatchProbeStale firing for the probe",
                        am.log()[-2000:] + d.stderr()[-2000:])
                if got:
                    print(f"note: probe stopped → IowatchProbeStale notified "
                          f"{got[0] - t_stale:.1f} s (3 intervals of 1 s + 2 s here; 3 × every "
                          "+ 10 min as shipped)")

                # 4. The daemon is gone.
                throttle.remove(d.proc.pid)
                t2 = time.monotonic()
                d.proc.send_signal(signal.SIGKILL)
                d.proc.wait()
                got = receiver.wait("IowatchDown", "firing", t2, 60)
                r.check(got and got[1]["labels"].get("instance") == instance,
                        "the receiver got IowatchDown firing for the host",
                        am.log()[-2000:] + prom.log()[-2000:])
                if got:
                    print(f"note: killed → IowatchDown notified {got[0] - t2:.1f} s "
                          "(scrape failures, then `for:` 5 s here, 5 min as shipped)")
    finally:
        if throttle is not None and d is not None:
            throttle.remove(d.proc.pid if d.alive() else None)
        if d is not None:
            d.close()
        receiver.close()
        shutil.rmtree(work, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
