#!/usr/bin/python3
"""`iowatch sweep` on this machine's root disk (a probe file under /var/tmp).

A small grid (4k and 64k, QD1 and QD8, reads and writes, random; direct and
buffered) in an 8 s budget: the JSON parses, every point completed with
bandwidth = IOPS x bs and lat percentiles at least clat's, the findings are
there (knee, latency-optimal depth, buffered against direct), the table names
every point with lat, the SVG is well-formed XML with a line and dots per depth
in each panel and a legend, and the sweep is stored (--list) and compared with
a second one (--compare --latency=clat). Then raw mode on a loop device,
read-only (root only: reads run, writes are skipped without --destructive),
raw refused without --allow-block-device, and writes to a file iowatch did not
create refused. Everything created is removed.

Usage: sweep.py IOWATCH_BINARY
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.dom.minidom

import daemon
from serve_hotplug import loop_device

GRID = ["--bs=4k,64k", "--iodepth=1,8", "--rw=read,write", "--pattern=random"]


def sweep(binary, *args, timeout=120):
    return subprocess.run([binary, "sweep", *args], capture_output=True, text=True,
                          timeout=timeout)


def check_sweep(r, binary, workdir, state):
    svg = os.path.join(workdir, "chart.svg")
    run = sweep(binary, f"--directory={workdir}", "--size=64m", *GRID, "--mode=direct,buffered",
                "--budget=8s", f"--state.dir={state}", f"--svg={svg}", "-o", "json")
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        report = None
    if not r.check(run.returncode == 0 and report, "sweep: ran, JSON parses",
                   f"exit {run.returncode}: {run.stderr[-800:]}"):
        return
    points = report["points"]
    r.check(len(points) == 16, "sweep: 16 points (2 bs x 2 depths x 2 rw x 2 modes)", str(len(points)))
    r.check(report["point_runtime_ms"] == 500, "sweep: the budget over the points, 500 ms each",
            str(report["point_runtime_ms"]))
    r.check(report["device"] != "", "sweep: the device under the target is named", report["device"])
    for p in points:
        tag = f"{p['mode']} {p['rw']} {p['bs']} QD{p['iodepth']}"
        ok = p["end"] == "completed" and p["iops"] > 0
        r.check(ok, f"sweep {tag}: completed with I/O", str(p))
        if ok:
            r.check(abs(p["bw_bytes"] - p["iops"] * p["bs"]) <= 0.01 * p["bw_bytes"] + p["bs"],
                    f"sweep {tag}: bandwidth = IOPS x bs", f"{p['bw_bytes']} vs {p['iops']}")
            r.check(0 < p["clat_p50_ns"] <= p["clat_p99_ns"], f"sweep {tag}: p50 <= p99")
            # lat = slat + clat for every I/O: each lat percentile is at least clat's.
            r.check(0 < p["lat_p50_ns"] <= p["lat_p99_ns"] and
                    p["lat_p50_ns"] >= p["clat_p50_ns"] and p["lat_p99_ns"] >= p["clat_p99_ns"],
                    f"sweep {tag}: lat p50 <= p99, each at least clat's", str(p))
            r.check(p["cpu_seconds_per_gib"] > 0, f"sweep {tag}: CPU per GiB measured")
    made = sorted(f for f in os.listdir(workdir) if f.endswith(".0.0"))
    r.check(made == ["sweep.0.0"], "sweep: every point ran on the one probe file", str(made))
    kinds = sorted({f["kind"] for f in report["findings"]})
    r.check(kinds == ["buffered_vs_direct", "knee", "latency_optimal_depth"],
            "sweep: knee, latency-optimal depth and buffered-vs-direct findings", str(kinds))
    try:
        chart = xml.dom.minidom.parse(svg)
        lines = len(chart.getElementsByTagName("polyline"))
        # 4 series (2 modes x 2 rw) x 2 depths x 2 panels
        r.check(lines == 16, "sweep: the SVG parses, a line per depth in each panel", str(lines))
        dots = len(chart.getElementsByTagName("circle"))
        # a dot per point in each panel (16 x 2), one per depth in each row's legend (4 x 2)
        r.check(dots == 40, "sweep: the SVG marks every point and has a legend", str(dots))
        texts = [t.firstChild.data for t in chart.getElementsByTagName("text") if t.firstChild]
        r.check(any("lat p99 µs" in t for t in texts) and not any("clat" in t for t in texts),
                "sweep: the chart shows lat (total latency)", str(texts[:8]))
        r.check(not chart.getElementsByTagName("script"), "sweep: the SVG has no script")
    except Exception as e:  # noqa: BLE001 - any parse failure is the finding
        r.check(False, "sweep: the SVG parses as XML", str(e))

    table = sweep(binary, f"--directory={workdir}", "--size=64m", *GRID, "--mode=direct",
                  "--budget=4s", f"--state.dir={state}")
    r.check(table.returncode == 0 and "findings:" in table.stdout and "lat p99 µs" in table.stdout
            and table.stdout.count("randread") + table.stdout.count("randwrite") >= 8,
            "sweep: the table has every point, lat and the findings", table.stdout[-1500:])
    listed = sweep(binary, "--list", f"--state.dir={state}")
    rows = [line for line in listed.stdout.splitlines() if line.strip()]
    r.check(listed.returncode == 0 and len(rows) == 2, "sweep --list: both sweeps stored",
            listed.stdout + listed.stderr)
    compared = sweep(binary, "--compare", "1", "2", f"--state.dir={state}", "--latency=clat")
    r.check(compared.returncode == 0 and "8 points in both; median B/A" in compared.stdout and
            "clat p99" in compared.stdout,
            "sweep --compare 1 2: the direct points side by side",
            compared.stdout[-800:] + compared.stderr)


def check_raw_and_safety(r, binary, workdir, state):
    no_flag = sweep(binary, f"--directory={workdir}", "--size=64m", "--bs=4k", "--iodepth=1",
                    "--rw=read", "--pattern=random", "--mode=raw", "--budget=1s", "--no-store")
    r.check(no_flag.returncode != 0 and "--allow-block-device" in no_flag.stderr,
            "sweep --mode=raw without --allow-block-device: refused, naming the flag",
            no_flag.stderr[-500:])
    foreign = os.path.join(workdir, "theirs.dat")
    with open(foreign, "wb") as f:
        f.write(b"x" * (1 << 20))
    before = open(foreign, "rb").read()
    wrote = sweep(binary, f"--filename={foreign}", "--bs=4k", "--iodepth=1", "--rw=write",
                  "--pattern=random", "--mode=direct", "--budget=1s", "--no-store")
    r.check(wrote.returncode != 0 and open(foreign, "rb").read() == before,
            "sweep: writes to a file iowatch did not create are refused, the file untouched",
            wrote.stderr[-500:])
    if os.geteuid() != 0 or shutil.which("losetup") is None:
        print("SKIP: raw mode needs root and losetup (a loop device to read)")
        return
    backing = os.path.join(workdir, "loop.img")
    with loop_device(backing, 64 << 20) as dev:
        before = open(backing, "rb").read()
        raw = sweep(binary, f"--filename={dev}", "--bs=4k,64k", "--iodepth=1", "--rw=read,write",
                    "--pattern=random", "--mode=raw", "--allow-block-device", "--budget=2s",
                    f"--state.dir={state}", "-o", "json")
        try:
            report = json.loads(raw.stdout)
        except json.JSONDecodeError:
            report = None
        if r.check(raw.returncode == 0 and report, "sweep --mode=raw: ran on the loop device",
                   raw.stderr[-800:]):
            ends = {(p["rw"], p["bs"]): p["end"] for p in report["points"]}
            r.check(all(e == "completed" for (rw, _), e in ends.items() if rw == "read") and
                    all(e == "skipped" for (rw, _), e in ends.items() if rw == "write"),
                    "sweep --mode=raw: reads measured, writes skipped without --destructive",
                    str(ends))
            r.check(report["device"] == os.path.basename(dev), "sweep --mode=raw: the device named",
                    report["device"])
        r.check(open(backing, "rb").read() == before, "sweep --mode=raw: the device unchanged")


def main():
    binary = os.path.abspath(sys.argv[1])
    daemon.exit_on_sigterm()
    r = daemon.Results()
    workdir = tempfile.mkdtemp(prefix="iowatch-sweep-", dir="/var/tmp")
    state = os.path.join(workdir, "state")
    os.makedirs(state)
    try:
        check_sweep(r, binary, workdir, state)
        check_raw_and_safety(r, binary, workdir, state)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
