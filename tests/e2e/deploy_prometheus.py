#!/usr/bin/python3
"""deploy/ against a real Prometheus: the scrape config, every alert rule, every dashboard query.

A running iowatch (this machine's /proc and /sys, two fast probe jobs so the probe families
and baselines exist) is scraped every second by the Debian `prometheus` server, started on
loopback with a temporary data directory, deploy/prometheus/scrape.yml as its scrape config
(targets and interval adapted) and deploy/prometheus/alerts.yml and fleet.rules.yml as its
rules. Then:
1. `promtool check config` accepts the generated config; the target is up;
2. every alert rule is loaded and healthy, its expression evaluates without error through
   /api/v1/query, and every metric it reads returns data (the rule's own result may be empty);
3. every query of deploy/grafana/iowatch.json (its variables substituted as Grafana would:
   one instance, All for device and probe) returns data, and every variable's label_values
   query has values; a query whose families cannot have data here (said on stdout, with why)
   must still evaluate without error;
4. no metric named anywhere under deploy/ is missing from a live scrape of the daemon (the
   series Prometheus makes itself, up and scrape_*, aside);
5. the dashboard's structure: unique panel ids, every panel on the Prometheus data-source
   variable, every $variable it uses defined.

Usage: deploy_prometheus.py IOWATCH_BINARY SOURCE_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import daemon
import promstack
from promstack import api, query

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
    every: 2s
    jitter: 0s
    timeout: 10s
    options: {directory: probes, size: 4M, ioengine: psync, direct: 1, runtime: 300ms, time_based: 1}
  jobs:
    - name: e2e-read
      options: {rw: randread, bs: 4k}
    - name: e2e-write
      options: {rw: randwrite, bs: 4k}
"""
# The eBPF collector's families (dashboard row, one alert) need root and the kernel's BTF;
# without them their queries are left out, said on stdout (CI has both).
BPF = os.geteuid() == 0 and os.path.exists("/sys/kernel/btf/vmlinux")


def kernel_has_block_rq_error():
    """Whether the BPF collector can count I/O errors: the kernel's block_rq_error tracepoint,
    found in its BTF as the collector finds it (btf_trace_block_rq_error; kernels before 5.x
    have none)."""
    try:
        with open("/sys/kernel/btf/vmlinux", "rb") as f:
            return b"btf_trace_block_rq_error" in f.read()
    except OSError:
        return False


# iowatch_block_errors_total has a series once the collector saw an error on a disk it reports:
# the test makes one on a loop device after the daemon started, so the loop devices are in the
# device selection here (the default leaves them out).
BPF_ERRORS = BPF and kernel_has_block_rq_error()
if BPF:
    CONFIG += "collectors:\n  bpf:\n    enabled: true\n"
if BPF_ERRORS:
    CONFIG += "devices:\n  exclude: '^(ram|zram|fd)\\d+$'\n"


# btrfs's error counters exist only where a btrfs is mounted: as root the test mounts one on a
# loop device; without root their checks are left out, said on stdout (CI is root).
BTRFS = os.geteuid() == 0 and shutil.which("mkfs.btrfs") is not None
# A filesystem shutdown exists only in a kernel log that has one: as root the test shuts an XFS
# on a loop device down (xfs_io -x -c shutdown) before the daemon starts.
XFS_SHUTDOWN = os.geteuid() == 0 and all(shutil.which(t) for t in ("mkfs.xfs", "xfs_io"))
# The kernel log's I/O errors exist once the kernel logged one: as root the test makes a real
# one on a loop device, and the daemon (root) reads the log.
KMSG = os.geteuid() == 0
# A SCSI sense report exists only where a SCSI disk failed a command this boot: nothing here
# can make one (this VM's disks are virtio and its kernel has no scsi_debug), so the family is
# checked only when the kernel log already holds one: scsi_print_sense's own line, from its
# first character (a line quoting "Sense Key : " for a user, as an overlayfs mount option can
# make the kernel do, is no report and iowatch rightly counts none).
SENSE_LINE = re.compile(r"\S+ \d+:\d+:\d+:\d+: \[[^\]]+\] (tag#\d+ )?Sense Key : ")
SCSI_SENSE = KMSG and any(facility == 0 and SENSE_LINE.match(text)
                          for _, facility, text in daemon.kernel_log())


def mdstat():
    try:
        with open("/proc/mdstat") as f:
            return f.read()
    except OSError:
        return ""


# md arrays are the host's own: their families have series only where /proc/mdstat lists an
# array, and the sync's only while one syncs (nothing here makes one: the md alerts' shapes are
# promtool's cases in alerts_test.yml).
MD_ARRAYS = re.search(r"^md\S* : ", mdstat(), re.M) is not None
MD_SYNC = re.search(r"(resync|recovery|check|repair|reshape) =", mdstat()) is not None
NVME = os.path.isdir("/sys/class/nvme") and bool(os.listdir("/sys/class/nvme"))
ZFS_POOLS = os.path.isdir("/proc/spl/kstat/zfs") and any(
    os.path.isfile(os.path.join("/proc/spl/kstat/zfs", p, "state"))
    for p in os.listdir("/proc/spl/kstat/zfs"))


def multipath_maps():
    """Whether a dm device here is a multipath map (udev's DM_UUID starts with mpath-)."""
    for name in os.listdir("/sys/block"):
        try:
            with open(f"/sys/block/{name}/dm/uuid") as f:
                if f.read().startswith("mpath-"):
                    return True
        except OSError:
            continue
    return False


MULTIPATH = multipath_maps()


def thin_pools():
    """Whether dmsetup lists an LVM thin pool here (as the thin_pool source reads them)."""
    try:
        out = subprocess.run(["dmsetup", "status", "--target", "thin-pool"], capture_output=True,
                             text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and " thin-pool " in out.stdout


THIN_POOLS = thin_pools()


def smart_disks():
    """Disks here whose health smartctl reads (none on virtio or Xen disks)."""
    out = []
    if not shutil.which("smartctl"):
        return out
    for name in sorted(os.listdir("/sys/block")):
        if name.startswith(("loop", "dm-", "md", "zram", "ram", "nbd")):
            continue
        run = subprocess.run(["smartctl", "--json=c", "-H", "-n", "standby", f"/dev/{name}"],
                             capture_output=True, text=True, timeout=60)
        try:
            if "passed" in json.loads(run.stdout).get("smart_status", {}):
                out.append(name)
        except ValueError:
            pass
    return out


# The SMART families exist for disks that have SMART: this VM's virtio disk has none, so their
# checks are left out here, said on stdout; a host with SATA, SAS or NVMe disks runs them.
SMART = bool(smart_disks()) if os.geteuid() == 0 else False
# iowatch_smart_up alone has a series for every whole disk that may have SMART once smartctl
# ran on it, read or not (0 on a virtio disk): checked wherever smartctl and such a disk are.
SMART_UP = shutil.which("smartctl") is not None and any(
    not name.startswith(("loop", "dm-", "md", "zram", "ram", "nbd", "fd"))
    for name in os.listdir("/sys/block"))


def cgroup_v2_io():
    """Whether this host counts every cgroup's I/O per disk: cgroup v2 with the io controller.
    v1's blkio.throttle counts a cgroup only where a throttle rule exists for the disk, so a
    v1 host (this VM) has no iowatch_cgroup_io_* series unless something set one."""
    try:
        with open("/sys/fs/cgroup/cgroup.controllers") as f:
            return "io" in f.read().split()
    except OSError:
        return False


CGROUP_IO = cgroup_v2_io()


def needs_bpf(text):
    return "iowatch_block_" in text


def needs_smart_report(text):
    """Whether `text` reads a SMART family that needs a disk's health read (all but up)."""
    return any(m.startswith("iowatch_smart_") and m != "iowatch_smart_up"
               for m in re.findall(r"\b[a-z0-9_]+\b", text))


# The passive judge's families that exist only for a judged minute (its model learns from a
# disk's first hour of busy minutes first); the others have a series from a disk's first
# minute of at least 50 requests, which the probes' I/O gives the disk under the state
# directory: the test waits for it (the first minute boundary after the daemon started).
PASSIVE_JUDGED = ("iowatch_passive_latency_ratio", "iowatch_passive_bound_ratio",
                  "iowatch_passive_predicted_latency_seconds",
                  "iowatch_passive_regression_since_timestamp_seconds")


def left_out(text):
    """Why `text`'s metrics cannot have data here, or None."""
    if needs_bpf(text) and not BPF:
        return "no root or no kernel BTF here"
    if "iowatch_block_errors_total" in text and not BPF_ERRORS:
        return "the kernel has no block_rq_error tracepoint: the BPF collector counts no errors"
    if "btrfs" in text and not BTRFS:
        return "no root or no mkfs.btrfs here: no btrfs mounted"
    if "iowatch_kernel_filesystem_shutdowns_total" in text and not XFS_SHUTDOWN:
        return "no root or no xfsprogs here: no filesystem shut down"
    if "iowatch_kernel_scsi_sense_total" in text and not SCSI_SENSE:
        return "no SCSI disk here failed a command this boot (no sense report in the kernel log)"
    if needs_smart_report(text) and not SMART:
        return "no disk here gives smartctl its health (virtual disks have no SMART)"
    if "iowatch_smart_up" in text and not SMART_UP:
        return "no smartctl or no disk here that may have SMART"
    if "iowatch_kernel_" in text and not KMSG:
        return "no root here: no I/O error made, no kernel log read"
    if "iowatch_md_sync_" in text and not MD_SYNC:
        return "no md array here runs a resync, recovery, check or reshape"
    if "iowatch_md_" in text and not MD_ARRAYS:
        return "no md array here (/proc/mdstat lists none)"
    if "iowatch_nvme_" in text and not NVME:
        return "no NVMe controller here (sysfs class/nvme is empty)"
    if "iowatch_zfs_" in text and not ZFS_POOLS:
        return "no ZFS pool here (/proc/spl/kstat/zfs has none)"
    if "iowatch_multipath_" in text and not MULTIPATH:
        return "no dm-multipath map here"
    if "iowatch_thin_pool_" in text and not THIN_POOLS:
        return "no LVM thin pool here (dmsetup status --target thin-pool lists none)"
    if "iowatch_cgroup_io_" in text and not CGROUP_IO:
        return "cgroup v1 here: blkio counts a cgroup's I/O only under a throttle rule"
    if "iowatch_probe_drift_" in text:
        return "the drift watch's reference is a probe series' first day of runs"
    if any(family in text for family in PASSIVE_JUDGED):
        return "the passive judge judges a disk's minutes once it learned from an hour of them"
    if "iowatch_passive_drift_" in text:
        return "the passive drift watch compares a disk with its first day after three more"
    return None


class FailingLoop:
    """A real block I/O error, as a failing disk makes one, whenever asked (root): a loop device
    with direct I/O on a file cut short, read with O_DIRECT past the cut; the kernel logs "I/O
    error, dev loopN, … op 0x0:(READ)". It stays attached while the daemon runs, so that
    errors made after the BPF collector started are counted on a disk the daemon reports (a
    series per disk). Detached and removed on exit."""

    def __init__(self, work):
        self.image, self.loop = os.path.join(work, "eio.img"), None

    def __enter__(self):
        with open(self.image, "wb") as f:
            f.truncate(1 << 20)
        self.loop = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", self.image],
                                   check=True, capture_output=True, text=True).stdout.strip()
        os.truncate(self.image, 0)
        return self

    @property
    def name(self):
        return os.path.basename(self.loop)

    def fail_a_read(self):
        subprocess.run(["dd", f"if={self.loop}", "of=/dev/null", "bs=4096", "count=1", "skip=8",
                        "iflag=direct"], capture_output=True, check=False, timeout=60)

    def __exit__(self, *exc):
        if self.loop:
            subprocess.run(["losetup", "-d", self.loop], check=False)
        if os.path.exists(self.image):
            os.remove(self.image)


PROMETHEUS_OWN = {"up", "scrape_duration_seconds", "scrape_samples_scraped",
                  "scrape_series_added", "scrape_samples_post_metric_relabeling"}
METRIC = re.compile(r"\b((?:iowatch|process)_[a-z0-9_]+|up|scrape_duration_seconds)\b")


def base_name(name):
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def dashboard_queries(dashboard):
    """(panel title, expr) of every target, rows' nested panels included."""
    out = []
    for panel in dashboard["panels"]:
        for p in [panel] + panel.get("panels", []):
            for t in p.get("targets", []):
                out.append((p["title"], t["expr"]))
    return out


def substitute(expr, instance):
    return (expr.replace("$instance", instance).replace("$device", ".+").replace("$probe", ".+")
            .replace("$__rate_interval", "30s").replace("$__interval", "5s"))


def label_values(port, definition, instance):
    m = re.fullmatch(r"label_values\((.+), *(\w+)\)", substitute(definition, instance))
    if not m:
        raise RuntimeError(f"not a label_values query: {definition}")
    return api(port, f"/api/v1/label/{m.group(2)}/values", **{"match[]": m.group(1)})


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    if os.geteuid() == 0:
        daemon.own_mount_namespace()  # the btrfs and XFS loop devices' mounts
    source = sys.argv[2]
    if not shutil.which("prometheus") or not shutil.which("promtool"):
        print("FAIL: prometheus and promtool are needed (scripts/install-deps.sh installs them)")
        return 1
    deploy = os.path.join(source, "deploy")
    with open(os.path.join(deploy, "grafana", "iowatch.json")) as f:
        dashboard = json.load(f)
    tempfile.tempdir = "/var/tmp"
    r = daemon.Results()
    work = tempfile.mkdtemp(prefix="iowatch-e2e-prom-")
    prom = None
    btrfs = None
    failing = None
    try:
        if KMSG:
            failing = FailingLoop(work).__enter__()
            failing.fail_a_read()
            print(f"note: a real I/O error on {failing.name}")
        if BTRFS:
            btrfs = daemon.Ext4OnLoop(f"{work}/btrfs.img", f"{work}/btrfs", 256 << 20,
                                      mkfs=("mkfs.btrfs", "-q")).__enter__()
        if XFS_SHUTDOWN:
            with daemon.Ext4OnLoop(f"{work}/xfs.img", f"{work}/xfs", 320 << 20,
                                   mkfs=("mkfs.xfs", "-q")) as xfs:
                subprocess.run(["xfs_io", "-x", "-c", "shutdown", xfs.mnt], check=True,
                               capture_output=True)
                print(f"note: XFS on {os.path.basename(xfs.loop)} shut down")
        with daemon.Daemon(sys.argv[1], config=CONFIG) as d:
            started = time.monotonic()
            instance = f"127.0.0.1:{d.port}"
            if BPF_ERRORS:
                # A read right after start may come before the collector counts: fail reads
                # until it has counted one.
                counted, deadline = False, time.monotonic() + 30
                while not counted and time.monotonic() < deadline:
                    failing.fail_a_read()
                    counted, _ = d.scrape_until(
                        lambda s: any(n == "iowatch_block_errors_total" and
                                      l.get("device") == failing.name for n, l, _ in s), 2)
                r.check(counted, f"bpf: an I/O error on {failing.name} after start is counted "
                        "(iowatch_block_errors_total)", d.stderr()[-2000:])
            scrape = promstack.scrape_config(deploy, instance)
            promstack.copy_rules(deploy, work, "alerts.yml", "fleet.rules.yml")
            server = promstack.prometheus(
                work, "global:\n  evaluation_interval: 1s\nrule_files:\n  - alerts.yml\n"
                "  - fleet.rules.yml\n" + scrape)
            check = subprocess.run(["promtool", "check", "config", server.config],
                                   capture_output=True, text=True, timeout=60)
            r.check(check.returncode == 0,
                    "promtool check config accepts scrape.yml + alerts.yml + fleet.rules.yml",
                    check.stdout + check.stderr)
            prom = server.__enter__()
            port = prom.port

            # Until the target is up, both probes have baselines in Prometheus, and the
            # histogram has moved within the rate window.
            deadline, ready = time.monotonic() + 60, False
            while time.monotonic() < deadline and not ready:
                time.sleep(1)
                try:
                    ready = (query(port, 'up{job="iowatch"} == 1') and
                             len(query(port, "iowatch_probe_baseline_runs")) == 2 and
                             query(port, "rate(iowatch_probe_clat_seconds_count[30s]) > 0"))
                except (OSError, RuntimeError):
                    ready = False
            r.check(ready, "Prometheus scrapes iowatch (up 1, probes with baselines)",
                    prom.log()[-3000:] + d.stderr()[-2000:])
            # Until the passive judge closed a disk's first busy minute (at the first or second
            # minute boundary after the start) and Prometheus has two samples of it (increase).
            deadline, passive = started + 135, False
            while time.monotonic() < deadline and not passive:
                time.sleep(1)
                try:
                    passive = bool(query(
                        port, "count_over_time(iowatch_passive_windows_total[1m]) >= 2"))
                except (OSError, RuntimeError):
                    passive = False
            r.check(passive, "the passive judge has a disk's first busy minute in Prometheus",
                    d.stderr()[-2000:])
            time.sleep(3)  # a few rule evaluations

            # 2. Alert rules.
            groups = api(port, "/api/v1/rules")["groups"]
            rules = [rule for g in groups for rule in g["rules"]]
            r.check(len(rules) >= 30, f"alerts.yml and fleet.rules.yml loaded ({len(rules)} rules)")
            for rule in rules:
                name = rule["name"]
                r.check(rule.get("health") == "ok", f"{name}: healthy", rule.get("lastError", ""))
                try:
                    query(port, rule["query"])
                    evaluated = True
                except (OSError, RuntimeError) as e:
                    evaluated = str(e)
                r.check(evaluated is True, f"{name}: its expression evaluates", str(evaluated))
                for metric in sorted(set(METRIC.findall(rule["query"]))):
                    if left_out(metric):
                        print(f"SKIP {name}: {metric} ({left_out(metric)})")
                        continue
                    selector = metric if metric in PROMETHEUS_OWN else f'{metric}{{instance="{instance}"}}'
                    r.check(query(port, selector), f"{name}: {metric} has data")

            # 3. Dashboard queries and variables.
            for title, expr in dashboard_queries(dashboard):
                concrete = substitute(expr, instance)
                if left_out(expr):
                    try:
                        query(port, concrete)
                        evaluated = True
                    except (OSError, RuntimeError) as e:
                        evaluated = str(e)
                    r.check(evaluated is True, f"dashboard '{title}': {expr[:90]} evaluates",
                            f"{evaluated}\n     {concrete}")
                    print(f"SKIP dashboard '{title}': {expr[:60]} has no data here "
                          f"({left_out(expr)})")
                    continue
                try:
                    result = query(port, concrete)
                except (OSError, RuntimeError) as e:
                    result = None
                    detail = str(e)
                else:
                    detail = concrete
                r.check(result, f"dashboard '{title}': {expr[:90]} returns data", detail)
            for var in dashboard["templating"]["list"]:
                if var["type"] == "query":
                    values = label_values(port, var["definition"], instance)
                    r.check(values, f"dashboard variable ${var['name']} has values ({values[:5]})")

            # 4. Every metric named under deploy/ is in a live scrape.
            live = {base_name(name) for name, _, _ in d.scrape()}
            referenced = {}
            for root, _, files in os.walk(deploy):
                for file in files:
                    if file.endswith((".yml", ".yaml", ".json")):
                        with open(os.path.join(root, file)) as f:
                            for metric in METRIC.findall(f.read()):
                                referenced.setdefault(metric, file)
            missing = {m: f for m, f in referenced.items()
                       if m not in PROMETHEUS_OWN and base_name(m) not in live
                       and not left_out(m)}
            r.check(not missing, f"all {len(referenced)} metrics named in deploy/ are in a live scrape",
                    str(missing))
    finally:
        if prom is not None:
            prom.__exit__()
        if btrfs is not None:
            btrfs.__exit__(None, None, None)
        if failing is not None:
            failing.__exit__(None, None, None)
        shutil.rmtree(work, ignore_errors=True)

    # 5. Dashboard structure.
    ids = [p["id"] for p in dashboard["panels"]]
    r.check(len(ids) == len(set(ids)), "dashboard panel ids are unique")
    targets = [p for p in dashboard["panels"] if p["type"] != "row"]
    r.check(all(p["datasource"]["uid"] == "${datasource}" and
                all(t["datasource"]["uid"] == "${datasource}" for t in p["targets"])
                for p in targets), "every panel and query uses the $datasource variable")
    defined = {v["name"] for v in dashboard["templating"]["list"]}
    used = set(re.findall(r"\$(\w+)", json.dumps(dashboard))) - {"__rate_interval", "__interval"}
    used = {u for u in used if not u[0].isdigit()}
    r.check(used <= defined, f"every $variable used is defined ({sorted(used)})",
            str(used - defined))
    r.check(all(p["gridPos"]["x"] + p["gridPos"]["w"] <= 24 for p in dashboard["panels"]),
            "every panel fits the 24-column grid")
    exprs = " ".join(expr for _, expr in dashboard_queries(dashboard))
    passive = ("iowatch_passive_latency_ratio", "iowatch_passive_bound_ratio",
               "iowatch_passive_regression")
    r.check(all(re.search(rf"\b{m}\b", exprs) for m in passive),
            f"the dashboard shows the passive judge's ratio, bound and regression {passive}")
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
