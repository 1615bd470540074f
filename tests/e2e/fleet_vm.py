#!/usr/bin/python3
"""The fleet on a distributed store (root): several `iowatch serve` daemons act as hosts, one of
them slowed, and the fleet rules find that one and no other, through both ways users feed
VictoriaMetrics.

- Hosts: HOSTS daemons, each with its own ext4 on its own loop device (direct I/O) and the same
  probe job on it (4k random direct reads for 300 ms every second), so each is a peer of the
  others: same workload fingerprint, same disk model. Loop devices report no model; the scrape
  gives theirs one (metric_relabel_configs on iowatch_disk_info{transport="loop"}), as a user
  does for virtual disks. The hosts share this VM's two CPUs, so the daemons' contention
  classification is off (a run is never "contended" here).
- Path 1, the agent: `vmagent` scrapes every host each second and remote-writes to a
  `victoria-metrics` server; a `vmalert` evaluates deploy/prometheus/fleet.rules.yml and
  alerts.yml against it every second, notifying Alertmanager with path="vmagent".
- Path 2, plain Prometheus: the Debian `prometheus` scrapes the same hosts and remote-writes
  (`remote_write`) to a second `victoria-metrics`; a second `vmalert` evaluates the same rules
  there, notifying with path="prometheus".
- Both reach deploy/alertmanager/alertmanager.yml's Alertmanager (group_wait and
  group_interval 1 s) and a webhook receiver here.
The rules as shipped, but: Debian's vmalert (1.79) does not know `keep_firing_for` (later
ones do), so those lines are removed; the peer alerts' 90 minutes (every input of the last
90 minutes slower than the peers, from at least three runs) are 30 s (some 15 runs, so one
slow run of a healthy host does not fire, and the slowed host's runs, which the busy check
may skip for a few seconds, are always three or more). The model-wide alert keeps its
`for: 1h` (it needs a week of history to mean anything; promtool tests and the simulation
cover it).
Each host's reads are held at the same cap by its own cgroup's io.max (identical disks). The
cap is set from what the hosts measure uncapped first: a third of the slowest, at most
MAX_PEER_IOPS. With this VM compiling on both CPUs a loop device's 4k direct reads at depth 1
came to 170-210 a second; a fixed cap above that would not bind, the peers would spread with
the load, and any one of them could fall outside their spread. Checked first: every host's median
run is at the cap (the peers agree).
1. Host SLOW's reads are throttled to a tenth of the cap; its runs are checked to reach the
   stores that slow, then both paths notify IowatchProbeSlowerThanPeers for it, with model and
   firmware labels and the ratio in the description; no fleet alert names another host, on
   either path.
2. Back to the cap: resolved, on both paths.

Usage: fleet_vm.py IOWATCH_BINARY SOURCE_DIR
"""
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack

import daemon
import promstack
from serve_regression import Throttle

JOB = "fleet-read"
HOSTS = 7  # the peer alerts need 5 peers besides the slow one; one spare for a missed scrape
SLOW = 2
# Every host's disk delivers the peer cap (its cgroup's io.max), as identical disks would: the
# loop devices on this VM's one disk and two CPUs would otherwise spread so widely that the
# peers' spread (rightly) hides any one of them. The slowed one delivers a tenth of it.
MAX_PEER_IOPS = 400
MIN_PEER_IOPS = 50  # below it a slowed run completes too few reads to measure
MODEL = "E2E LOOP DISK"
FLEET_ALERTS = ("IowatchProbeSlowerThanPeers", "IowatchProbeLatencyAbovePeers",
                "IowatchModelSlowerThanItsWeek")
PATHS = ("vmagent", "prometheus")


def host_config(directory):
    # Loop devices are excluded by default: these are the disks under test. Runs of 1 s: in a
    # run of 300 ms, a stall of the VM's CPU (60-100 ms, its hypervisor taking the vCPUs back
    # while both were busy) cost a capped host a quarter of its IOPS.
    return "devices:\n  exclude: \"\"\n" + daemon.one_probe_config(JOB, directory=directory,
                                                                   runtime="1s")


def scrape_config(deploy, instances):
    """deploy/prometheus/scrape.yml aimed at every host, each second, the loop disks given a
    model."""
    text = promstack.scrape_config(deploy, "HOST")
    targets = "\n".join(f"          - {i}" for i in instances)
    text = re.sub(r"^ *- HOST$", targets, text, flags=re.M)
    relabel = (
        "    metric_relabel_configs:\n"
        "      - source_labels: [__name__, transport]\n"
        "        regex: iowatch_disk_info;loop\n"
        "        target_label: model\n"
        f"        replacement: {MODEL}\n")
    return text.replace("    static_configs:\n", relabel + "    static_configs:\n", 1)


def vmalert_rules(deploy, work):
    """fleet.rules.yml and alerts.yml as vmalert 1.79 takes them: without keep_firing_for, the
    peer alerts' 90 minutes (every input slow, at least three runs) 30 s. Returns the two paths."""
    paths = []
    for name in ("fleet.rules.yml", "alerts.yml"):
        with open(os.path.join(deploy, "prometheus", name)) as f:
            text = re.sub(r"^ *keep_firing_for: .*\n", "", f.read(), flags=re.M)
        if name == "fleet.rules.yml":
            if text.count("[90m]) ") != 4:
                raise RuntimeError(f"{name}: the two peer alerts no longer look back 90m")
            text = text.replace("[90m]) ", "[30s]) ")
        paths.append(os.path.join(work, name))
        with open(paths[-1], "w") as f:
            f.write(text)
    return paths


def wait_until(predicate, seconds, step=0.5):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


def peers_recorded(store_port):
    """How many hosts' probe IOPS the fleet rules see as peers in that store (0 when none)."""
    try:
        got = promstack.query(store_port, "iowatch:probe_iops:peers")
    except (OSError, RuntimeError):
        return 0
    return max((int(float(s["value"][1])) for s in got), default=0)


def host_iops(host):
    """The read IOPS of the host's last probe run (None before its first)."""
    got = daemon.values(host.scrape(), "iowatch_probe_iops", probe=JOB, op="read")
    return got[0] if got else None


def runs_iops(hosts, runs, seconds):
    """Each host's read IOPS over its next `runs` completed runs ({index: [iops, ...]}), scraped
    as each run completes; fewer where `seconds` ran out."""
    seen = {i: {} for i in range(len(hosts))}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(len(v) < runs for v in seen.values()):
        for i, host in enumerate(hosts):
            samples = host.scrape()
            done = daemon.completed_runs(samples, JOB)
            got = daemon.values(samples, "iowatch_probe_iops", probe=JOB, op="read")
            if done and got and len(seen[i]) < runs:
                seen[i].setdefault(done, got[0])
        time.sleep(0.3)
    return {i: list(v.values()) for i, v in seen.items()}


def peer_cap(uncapped):
    """The cap every host is held at: a third of the slowest host's median uncapped run, so
    that it still binds when the machine gets three times busier, within the limits."""
    slowest = min(sorted(v)[len(v) // 2] for v in uncapped.values())
    return max(MIN_PEER_IOPS, min(MAX_PEER_IOPS, int(slowest / 3)))


def milestones(instance, throttled_iops):
    """What each store shows, in order, between the throttle and the notification."""
    slow = f'instance="{instance}"'
    return [("slow runs stored", f'iowatch_probe_iops{{{slow},op="read"}} < {throttled_iops * 3}'),
            ("below its peers", f"iowatch:probe_iops:peer_margin{{{slow}}} < 0"),
            ("pending", f'ALERTS{{alertname="IowatchProbeSlowerThanPeers",{slow}}}'),
            ("firing", f'ALERTS{{alertname="IowatchProbeSlowerThanPeers",{slow},'
                       'alertstate="firing"}')]


def am_alerts(port):
    import urllib.request
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/alerts", timeout=10) as r:
            return r.read().decode()[:3000]
    except OSError as e:
        return str(e)


def query_some(port, expr):
    try:
        return bool(promstack.query(port, expr))
    except (OSError, RuntimeError):
        return False


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    daemon.require_root("loop devices and throttling a cgroup's I/O")
    daemon.own_mount_namespace()
    if daemon.missing_tools("victoria-metrics", "vmagent", "vmalert", "prometheus",
                            "prometheus-alertmanager"):
        return 1
    deploy = os.path.join(sys.argv[2], "deploy")
    tempfile.tempdir = "/var/tmp"
    r = daemon.Results()
    work = tempfile.mkdtemp(prefix="iowatch-e2e-fleet-")
    receiver = promstack.Receiver()
    hosts = []
    try:
        with ExitStack() as stack:
            disks = [stack.enter_context(daemon.Ext4OnLoop(
                os.path.join(work, f"disk{i}.img"), os.path.join(work, f"mnt{i}"), 32 << 20,
                direct_io=True)) for i in range(HOSTS)]
            throttles = []
            for disk in disks:
                rdev = os.stat(disk.loop).st_rdev
                throttles.append(Throttle(f"{os.major(rdev)}:{os.minor(rdev)}"))
            if not throttles[0].available():
                print("SKIP: no I/O throttling controller (cgroup v2 io or v1 blkio)")
                return 77
            for disk, throttle in zip(disks, throttles):  # each stopped before its disk goes
                # As a context: one that fails to start is closed and its directory removed.
                hosts.append(stack.enter_context(daemon.Daemon(sys.argv[1],
                                                               config=host_config(disk.mnt))))
                throttle.confine(hosts[-1].proc.pid)
                stack.callback(lambda d=hosts[-1], t=throttle: t.remove(
                    d.proc.pid if d.alive() else None))
            uncapped = runs_iops(hosts, 3, 60)
            if not all(uncapped.values()):
                r.check(False, "every host completed its first probe runs", str(uncapped))
                return r.finish()
            peer_iops = peer_cap(uncapped)
            throttled_iops = peer_iops // 10
            print(f"note: uncapped read IOPS per host {uncapped}: cap {peer_iops}, "
                  f"slowed {throttled_iops}")
            for throttle in throttles:
                throttle.limit(peer_iops)
            # Not the run under way when the cap came, nor one that had completed but was not
            # yet scraped (a round of scrapes takes longer with more hosts): the next three.
            capped = {i: v[2:] for i, v in runs_iops(hosts, 5, 60).items()}
            # The median of each host's three: one 300 ms run that the VM's load slowed by a
            # fifth (a vCPU taken away for 60 ms) does not make the peers disagree, and does not
            # page either (the alerts want every run of their window slower): checked below.
            r.check(all(v and 0.85 * peer_iops <= statistics.median(v) <= 1.15 * peer_iops
                        for v in capped.values()),
                    f"the peers agree: every host's median run is at the cap of {peer_iops} IOPS",
                    str(capped))
            instances = [f"127.0.0.1:{d.port}" for d in hosts]
            scrape = scrape_config(deploy, instances)
            rules = vmalert_rules(deploy, work)
            am = stack.enter_context(promstack.alertmanager(
                work, promstack.alertmanager_config(deploy, receiver.port)))
            stores = {path: stack.enter_context(promstack.victoria_metrics(work, f"vm-{path}"))
                      for path in PATHS}
            time.sleep(1)  # the stores listen before anything writes to them
            stack.enter_context(promstack.vmagent(work, "vmagent", scrape,
                                                  stores["vmagent"].port))
            stack.enter_context(promstack.prometheus(
                work, "global:\n  scrape_interval: 1s\n" + scrape
                + f"remote_write:\n  - url: http://127.0.0.1:{stores['prometheus'].port}"
                "/api/v1/write\n"))
            evaluators = {path: stack.enter_context(promstack.vmalert(
                work, f"vmalert-{path}", rules, stores[path].port, am.port, {"path": path}))
                for path in PATHS}

            t_start = time.monotonic()
            for path in PATHS:
                ok = wait_until(lambda: peers_recorded(stores[path].port) == HOSTS, 90)
                print(f"note: {path}: peers recorded {time.monotonic() - t_start:.1f} s")
                r.check(ok, f"{path}: the fleet rules see all {HOSTS} hosts as peers",
                        evaluators[path].log()[-2000:] + stores[path].log()[-1000:])

            # 1. One host's disk slows.
            throttles[SLOW].limit(throttled_iops)
            t0 = time.monotonic()
            stages = milestones(instances[SLOW], throttled_iops)
            seen = {path: {} for path in PATHS}
            deadline = t0 + 150
            while time.monotonic() < deadline and not all(
                    receiver.alerts("IowatchProbeSlowerThanPeers", "firing", t0, path=path)
                    for path in PATHS):
                for path in PATHS:
                    for stage, expr in stages:
                        if stage not in seen[path] and query_some(stores[path].port, expr):
                            seen[path][stage] = time.monotonic() - t0
                time.sleep(0.5)
            fired = {}
            for path in PATHS:
                # The fault first: without slow runs in the store no alert could be right.
                r.check("slow runs stored" in seen[path],
                        f"{path}: the slowed host's runs reach the store below "
                        f"{throttled_iops * 3} IOPS", str(seen[path]))
                got = receiver.wait("IowatchProbeSlowerThanPeers", "firing", t0, 1, path=path)
                fired[path] = got
                r.check(got and got[1]["labels"].get("instance") == instances[SLOW],
                        f"{path}: IowatchProbeSlowerThanPeers notified for the slowed host",
                        f"{seen[path]} " + evaluators[path].log()[-2000:])
                if got:
                    labels, text = got[1]["labels"], got[1]["annotations"].get("description", "")
                    # A loop device reports no firmware: the empty label is no label.
                    r.check(labels.get("model") == MODEL and labels.get("probe") == JOB
                            and labels.get("op") == "read",
                            f"{path}: its labels name the model, probe and op", str(labels))
                    r.check(re.search(r"IOPS at 0\.\d\d× the median", text),
                            f"{path}: its description quotes the ratio to the peers", text)
                    parts = ", ".join(f"{stage} {at:.1f} s" for stage, at in seen[path].items())
                    print(f"note: {path}: throttle → notification {got[0] - t0:.1f} s ({parts})")
            time.sleep(10)  # long enough for a wrong alert to fire too
            wrong = [(a["labels"].get("path"), a["labels"].get("alertname"),
                      a["labels"].get("instance"))
                     for name in FLEET_ALERTS
                     for _, a in receiver.alerts(name, "firing", 0)
                     if a["labels"].get("instance") != instances[SLOW]]
            r.check(not wrong, "no fleet alert names a host that was not slowed", str(wrong))
            early = [a["labels"].get("path") for at, a in receiver.alerts(
                "IowatchProbeSlowerThanPeers", "resolved", t0)]
            r.check(not early, "the alert held while the host stayed slow (no resolved)",
                    str(early))

            # 2. It recovers.
            throttles[SLOW].limit(peer_iops)
            t1 = time.monotonic()
            slow = f'instance="{instances[SLOW]}"'
            recovery = [("runs recovered",
                         f'iowatch_probe_iops{{{slow},op="read"}} > {peer_iops / 2}'),
                        ("within its peers", f"iowatch:probe_iops:peer_margin{{{slow}}} >= 0"),
                        ("no alert", f'absent(ALERTS{{alertname="IowatchProbeSlowerThanPeers",'
                                     f'{slow}}})')]
            seen = {path: {} for path in PATHS}
            deadline = t1 + 90
            while time.monotonic() < deadline and not all(
                    receiver.alerts("IowatchProbeSlowerThanPeers", "resolved", t1, path=path)
                    for path in PATHS if fired[path]):
                for path in PATHS:
                    for stage, expr in recovery:
                        if stage not in seen[path] and query_some(stores[path].port, expr):
                            seen[path][stage] = time.monotonic() - t1
                time.sleep(0.5)
            for path in PATHS:
                if not fired[path]:
                    continue
                print(f"note: {path}: after the throttle: {seen[path]}")
                got = receiver.wait("IowatchProbeSlowerThanPeers", "resolved", t1, 1, path=path,
                                    instance=instances[SLOW])
                r.check(got, f"{path}: IowatchProbeSlowerThanPeers resolved after the throttle",
                        evaluators[path].log()[-2000:] + am_alerts(am.port)
                        + str(receiver.notifications[-3:]))
                if got:
                    print(f"note: {path}: throttle lifted → resolved {got[0] - t1:.1f} s")
    finally:
        receiver.close()
        shutil.rmtree(work, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
