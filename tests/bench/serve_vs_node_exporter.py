#!/usr/bin/python3
"""Side-by-side cost of a scrape: `iowatch serve` vs prometheus-node-exporter.

Generates a procfs/sysfs tree with N block devices (default 1,000), starts both
exporters on it (node_exporter limited to the sources iowatch covers:
diskstats, meminfo, vmstat, stat), scrapes each K times in turn on loopback,
and reports per exporter: CPU seconds per scrape (from /proc/PID/stat, the
process's own and its children's: iowatch's statfs helpers), scrape latency
p50/p99, peak RSS (VmHWM), series and bytes per scrape.

--all-sources adds the host's mount table and pressure files to the tree:
node_exporter's filesystem and pressure collectors beside iowatch's
filesystem, pressure, kernel log and SCSI sources (both statfs the host's
real mounts). SMART stays off: smartctl on 1,000 made-up disks measures
smartctl, and node_exporter has no SMART of its own.

--host runs both on this host's own /proc and /sys instead, each with every
source it has: iowatch on the bundled config's defaults with the BPF collector
on (cgroups, processes, pressure, filesystems, the kernel log, SMART, SCSI, the
storage stack; probes off), node_exporter with its default collectors. The BPF
programs' own time is the kernel's, in neither figure (bpf_overhead.py).

iowatch's own time per sample, by collector, is printed after the comparison:
the mean of iowatch_collector_duration_seconds over the scrapes (with --spacing
1.0, one sample per scrape), the cost of each source beside the rest in the
same run.

Usage: serve_vs_node_exporter.py IOWATCH [--devices 1000] [--scrapes 200] [--all-sources]
       serve_vs_node_exporter.py IOWATCH --host --scrapes 90 --spacing 1.0  (root)
Run by hand (a benchmark, not a test); figures go to docs/benchmarks.md
("`iowatch serve` against prometheus-node-exporter 1.5").
"""
import argparse
import gzip as gzip_module
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import fixturegen  # noqa: E402


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def add_host_sources(root):
    """The host's mount table (iowatch reads mountinfo, node_exporter mounts) and pressure."""
    for name in ("self/mountinfo", "self/mounts", "1/mounts"):
        write(os.path.join(root, "proc", name), open(f"/proc/{name.replace('1/', 'self/')}").read())
    for name in ("cpu", "io", "memory"):
        write(os.path.join(root, "proc/pressure", name), open(f"/proc/pressure/{name}").read())


# `iowatch serve` on the generated tree with every source but SMART (smartctl on made-up
# disks measures smartctl) and without the probes (their fills and runs are no scrape cost).
ALL_SOURCES_CONFIG = "probes: {enabled: false}\ncollectors: {smart: {enabled: false}}\n"


def all_sources_tree(root, devices=1000, extra_config=""):
    """Generates the tree of `devices` block devices under root, with the host's mounts and
    pressure files, and a configuration of every source but SMART, probes off (then
    extra_config); returns the arguments that point `iowatch serve` at them."""
    make_tree(root, devices)
    add_host_sources(root)
    config = os.path.join(root, "iowatch.yaml")
    with open(config, "w") as f:
        f.write(ALL_SOURCES_CONFIG + extra_config)
    return [f"--config.file={config}", f"--path.procfs={os.path.join(root, 'proc')}",
            f"--path.sysfs={os.path.join(root, 'sys')}", f"--state.dir={root}/state"]


def make_tree(root, devices, seed=1):
    rng = random.Random(seed)
    lines = []
    for i in range(devices):
        name = f"nvme{i}n1" if i % 3 == 0 else (f"dm-{i}" if i % 3 == 1 else f"sd{chr(97 + i % 26)}{i}")
        major = 259 if i % 3 == 0 else (253 if i % 3 == 1 else 8)
        c = fixturegen.device_counters(rng, 17, "normal")
        lines.append(f"{major:4d} {i:7d} {name} " + " ".join(str(v) for v in c))
        d = os.path.join(root, "sys/block", name)
        write(os.path.join(d, "stat"), fixturegen.stat_file(c))
        write(os.path.join(d, "dev"), f"{major}:{i}\n")
        for attr, value in [("rotational", "0"), ("logical_block_size", "512"),
                            ("physical_block_size", "4096"), ("scheduler", "[none] mq-deadline"),
                            ("nr_requests", "1023"), ("max_sectors_kb", "1280"),
                            ("read_ahead_kb", "128"), ("optimal_io_size", "0")]:
            write(os.path.join(d, "queue", attr), value + "\n")
        if name.startswith("dm-"):
            write(os.path.join(d, "dm/name"), f"vg-lv{i}\n")
    write(os.path.join(root, "proc/diskstats"), "\n".join(lines) + "\n")
    for name in ("stat", "meminfo", "vmstat"):
        shutil.copy(f"/proc/{name}", os.path.join(root, "proc", name))
    # The live uptime, so that intervals are real and iowatch derives its series.
    os.symlink("/proc/uptime", os.path.join(root, "proc", "uptime"))
    for c in range(os.cpu_count()):
        write(os.path.join(root, f"sys/devices/system/cpu/cpu{c}/online"), "1\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stat_fields(pid):
    return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()


def cpu_seconds(pid):
    """The process's CPU, its reaped children's, and its live children's."""
    fields = stat_fields(pid)
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            child = stat_fields(entry)
        except OSError:
            continue
        if int(child[1]) == pid:
            ticks += int(child[11]) + int(child[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def peak_rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def wait_up(url, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"{url} did not come up")


def fetch(url, gzip):
    headers = {"Accept-Encoding": "gzip"} if gzip else {}
    return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10).read()


COLLECTOR_DURATION = re.compile(r'^iowatch_collector_duration_seconds\{collector="([^"]+)"\} (\S+)$',
                                re.M)


def collector_seconds(bodies, summary=statistics.mean):
    """iowatch_collector_duration_seconds by collector over the scraped bodies, summarised
    (the mean by default)."""
    values = {}
    for body in bodies:
        for name, value in COLLECTOR_DURATION.findall(body):
            values.setdefault(name, []).append(float(value))
    return {name: summary(v) for name, v in values.items()}


def main_thread_seconds(pid):
    """The CPU of the process's first thread, in nanoseconds (schedstat, not stat's 10 ms
    ticks): iowatch serve's HTTP server, which renders each scrape (the samples are taken on
    other threads)."""
    with open(f"/proc/{pid}/task/{pid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e9


def measure(name, url, pid, scrapes, spacing, gzip=False):
    """CPU per scrape is all the process's CPU over the run divided by the scrapes:
    with `spacing` >= the sampling interval it includes a sample and a render per scrape.
    main_thread_ms_per_scrape is the first thread's share of it."""
    body = fetch(url, False)  # warm up; series and bytes are counted uncompressed
    latencies, bodies = [], []
    cpu0, main0 = cpu_seconds(pid), main_thread_seconds(pid)
    for _ in range(scrapes):
        t = time.perf_counter()
        bodies.append(fetch(url, gzip))
        latencies.append(time.perf_counter() - t)
        time.sleep(max(0.0, spacing - (time.perf_counter() - t)))
    cpu = (cpu_seconds(pid) - cpu0) / scrapes
    main_thread = (main_thread_seconds(pid) - main0) / scrapes
    # Decoded after the timed loop, so that this process's work is not in the figures.
    texts = [(gzip_module.decompress(b) if gzip else b).decode() for b in bodies]
    series = sum(1 for line in body.decode().splitlines() if line and not line.startswith("#"))
    latencies.sort()
    return {"exporter": name, "cpu_ms_per_scrape": cpu * 1000,
            "main_thread_ms_per_scrape": main_thread * 1000,
            "p50_ms": statistics.median(latencies) * 1000,
            "p99_ms": latencies[int(0.99 * (len(latencies) - 1))] * 1000,
            "peak_rss_mib": peak_rss_kib(pid) / 1024, "series": series, "bytes": len(body),
            "collector_seconds": collector_seconds(texts),
            "collector_median_seconds": collector_seconds(texts, statistics.median)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("iowatch")
    ap.add_argument("--devices", type=int, default=1000)
    ap.add_argument("--scrapes", type=int, default=200)
    ap.add_argument("--gzip", action="store_true",
                    help="ask for gzip, as Prometheus does (series and bytes stay uncompressed)")
    ap.add_argument("--all-sources", action="store_true",
                    help="filesystems, pressure, kernel log and SCSI too (see the docstring)")
    ap.add_argument("--host", action="store_true",
                    help="this host's /proc and /sys, every source of each (see the docstring)")
    ap.add_argument("--spacing", type=float, default=0.0,
                    help="seconds between scrape starts (1.0: one scrape per iowatch sample)")
    args = ap.parse_args()
    node = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if not node:
        sys.exit("prometheus-node-exporter is not installed")
    with tempfile.TemporaryDirectory(prefix="iowatch-bench-") as tmp:
        p1, p2 = free_port(), free_port()
        config = os.path.join(tmp, "iowatch.yaml")
        ours_args = [args.iowatch, "serve", f"--web.listen-address=127.0.0.1:{p1}",
                     f"--config.file={config}", f"--state.dir={tmp}/state", "--log.level=warn"]
        theirs_args = [node, f"--web.listen-address=127.0.0.1:{p2}", "--log.level=warn"]
        # Scrape cost only: the built-in probe jobs would add their fills and
        # runs to iowatch's CPU and RSS, and node_exporter has nothing alike.
        with open(config, "w") as f:
            if args.host:
                f.write("probes: {enabled: false}\ncollectors: {bpf: {enabled: true}}\n")
            elif args.all_sources:
                f.write(ALL_SOURCES_CONFIG)
            else:
                f.write("probes: {enabled: false}\ncollectors: {filesystem: {enabled: false}, "
                        "kmsg: {enabled: false}, smart: {enabled: false}}\n")
        if not args.host:
            make_tree(tmp, args.devices)
            if args.all_sources:
                add_host_sources(tmp)
            proc, sysd = os.path.join(tmp, "proc"), os.path.join(tmp, "sys")
            ours_args += [f"--path.procfs={proc}", f"--path.sysfs={sysd}"]
            theirs_args += ["--collector.disable-defaults", "--collector.diskstats",
                            "--collector.meminfo", "--collector.vmstat", "--collector.stat",
                            *(["--collector.filesystem", "--collector.pressure"]
                              if args.all_sources else []),
                            f"--path.procfs={proc}", f"--path.sysfs={sysd}",
                            f"--path.rootfs={'/' if args.all_sources else tmp}"]
        ours = subprocess.Popen(ours_args)
        theirs = subprocess.Popen(theirs_args, stderr=subprocess.DEVNULL)
        try:
            wait_up(f"http://127.0.0.1:{p1}/metrics")
            wait_up(f"http://127.0.0.1:{p2}/metrics")
            time.sleep(2)
            rows = [measure("iowatch", f"http://127.0.0.1:{p1}/metrics", ours.pid, args.scrapes,
                            args.spacing, args.gzip),
                    measure("node_exporter", f"http://127.0.0.1:{p2}/metrics", theirs.pid,
                            args.scrapes, args.spacing, args.gzip)]
        finally:
            for p in (ours, theirs):
                p.terminate()
                p.wait(timeout=10)
    keys = ["cpu_ms_per_scrape", "p50_ms", "p99_ms", "peak_rss_mib", "series", "bytes"]
    print(f"{'this host' if args.host else f'{args.devices} devices'}, {args.scrapes} scrapes "
          f"each, {args.spacing} s apart{', gzip' if args.gzip else ''}"
          f"{', all sources' if args.all_sources else ''}")
    print("| exporter | " + " | ".join(keys) + " |")
    for r in rows:
        print(f"| {r['exporter']} | " + " | ".join(
            f"{r[k]:.2f}" if isinstance(r[k], float) else str(r[k]) for k in keys) + " |")
    a, b = rows
    print(f"ratios iowatch/node_exporter: cpu {a['cpu_ms_per_scrape'] / b['cpu_ms_per_scrape']:.2f}, "
          f"rss {a['peak_rss_mib'] / b['peak_rss_mib']:.2f}, series {a['series'] / b['series']:.2f}")
    print("iowatch's time per sample by collector (mean iowatch_collector_duration_seconds):")
    print("| collector | ms per sample |")
    for name, seconds in sorted(a["collector_seconds"].items(), key=lambda kv: -kv[1]):
        print(f"| {name} | {seconds * 1000:.3f} |")


if __name__ == "__main__":
    main()
