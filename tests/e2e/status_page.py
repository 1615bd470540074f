#!/usr/bin/python3
"""The status page at / in a real browser: headless Chromium loads it from a running daemon.

The daemon samples a copy of the fixture tree tests/fixtures/metrics-two-samples/s1
(--path.procfs, --path.sysfs) whose /proc/uptime and /proc/diskstats counters this script
advances every 0.3 s (so the devices have rates), and runs one real probe job (psync, direct, under /var/tmp; baseline from 2
runs). Once the job has a baseline and a few runs, Chromium (Debian's `chromium`, headless)
loads http://127.0.0.1:PORT/: its DOM (--dump-dom, parsed here) must hold
  - one row per device of the fixture's /proc/diskstats in #devices, each with the 9 iostat
    cells, numbers only;
  - the vmstat header r b swpd … st and one row of 17 numbers in #vmstat;
  - a row for the probe job in #probes with its IOPS and baseline, a judged state ("ok" or
    "regressed: …", not "learning"), and an SVG
    sparkline whose polyline has one point per successful run;
  - no external resource (no src or href outside the page's own paths) and the meta refresh.
Then it takes a 1280×900 screenshot, kept as a test artifact (the path is printed).

Usage: status_page.py IOWATCH_BINARY SOURCE_DIR SCREENSHOT_PNG
"""
import html.parser
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time

import daemon

JOB = "page-randread"


def config(probe_dir):
    return f"""\
probes:
  enabled: true
  busy_threshold: 1
  baseline:
    runs: 2
    min_age: 0s
    # A judged state, whatever CI's other tests do on the disk (contended runs
    # are judged in load bands: unit tests and tests/bench/verdicts).
    contention: {{min_foreign_load: 1e9, max_cpu_wait: 1, max_cpu_steal: 1}}
  jobs:
    - name: {JOB}
      every: 1s
      jitter: 0s
      timeout: 10s
      options: {{directory: {probe_dir}, size: 4M, rw: randread, bs: 4k, ioengine: psync,
                 direct: 1, runtime: 200ms, time_based: 1}}
"""


class Dom(html.parser.HTMLParser):
    """Tables by id as lists of rows of (tag, text, attributes-of-cell); svg polylines; links."""

    def __init__(self):
        super().__init__()
        self.tables, self.links, self.meta = {}, [], []
        self._table = self._row = self._cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(a.get("id", f"t{len(self.tables)}"), [])
        elif tag == "tr" and self._table is not None:
            self._row = []
            self._table.append(self._row)
        elif tag in ("td", "th") and self._row is not None:
            self._cell = [tag, "", a, []]
            self._row.append(self._cell)
        elif tag == "polyline" and self._cell is not None:
            self._cell[3].append(a.get("points", ""))
        if "src" in a or "href" in a:
            self.links.append(a.get("src") or a.get("href"))
        if tag == "meta":
            self.meta.append(a)

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._cell = None
        elif tag == "tr":
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None and self._cell[3] == []:
            self._cell[1] += data


# Per 0.5 s of uptime: reads, merges, sectors, ms; writes, merges, sectors, ms; in flight (kept);
# io ms (250 of 500: 50 % util), weighted ms; then discard and flush fields unchanged.
DELTAS = [50, 5, 400, 100, 20, 2, 160, 60, 0, 250, 160]


class AdvancingTree(threading.Thread):
    """A copy of a fixture tree whose uptime and disk counters move, as a live kernel's do."""

    def __init__(self, fixture, root):
        super().__init__(daemon=True)
        shutil.copytree(fixture, root, symlinks=True)
        self.proc = os.path.join(root, "proc")
        self.stop = threading.Event()

    def write(self, name, text):
        path = os.path.join(self.proc, name)
        with open(path + ".new", "w") as f:
            f.write(text)
        os.replace(path + ".new", path)  # a reader never sees half a file

    def step(self):
        with open(os.path.join(self.proc, "uptime")) as f:
            up, idle = (float(x) for x in f.read().split())
        self.write("uptime", f"{up + 0.5:.2f} {idle + 0.9:.2f}\n")
        lines = []
        with open(os.path.join(self.proc, "diskstats")) as f:
            for line in f:
                fields = line.split()
                if len(fields) < 14:
                    lines.append(line)
                    continue
                counters = [int(x) + (DELTAS[i] if i < len(DELTAS) else 0)
                            for i, x in enumerate(fields[3:])]
                lines.append(f"{fields[0]:>4} {fields[1]:>7} {fields[2]} "
                             + " ".join(map(str, counters)) + "\n")
        self.write("diskstats", "".join(lines))

    def run(self):
        while not self.stop.wait(0.3):
            self.step()


def link_real_disk_stat(sysfs, path):
    """The daemon reads a run's conditions (the disk's counters around it) from
    dev/block/MAJ:MIN/stat under the injected sysfs, which is the fixture: give
    the fixture the real counters of the disk the probe writes to, or every
    run's conditions are unknown and none is judged."""
    dev = os.stat(path).st_dev
    real = os.path.realpath(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    if os.path.exists(os.path.join(real, "partition")):
        real = os.path.dirname(real)  # a partition's counters are its disk's share
    link = os.path.join(sysfs, "dev", "block", f"{os.major(dev)}:{os.minor(dev)}")
    os.makedirs(link, exist_ok=True)
    os.symlink(os.path.join(real, "stat"), os.path.join(link, "stat"))


def chromium(*args):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    profile = tempfile.mkdtemp(prefix="iowatch-chromium-")
    try:
        p = subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu",
                            "--no-first-run", f"--user-data-dir={profile}", *args],
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    source, screenshot = sys.argv[2], os.path.abspath(sys.argv[3])
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        print("FAIL: chromium is needed (scripts/install-deps.sh installs it)")
        return 1
    fixture = os.path.join(source, "tests/fixtures/metrics-two-samples/s1")
    with open(os.path.join(fixture, "proc/diskstats")) as f:
        names = [line.split()[2] for line in f if line.strip()]
    probe_dir = tempfile.mkdtemp(prefix="iowatch-e2e-page-", dir="/var/tmp")
    tree = AdvancingTree(fixture, os.path.join(probe_dir, "tree"))
    link_real_disk_stat(os.path.join(probe_dir, "tree", "sys"), probe_dir)
    tree.start()
    r = daemon.Results()
    try:
        with daemon.Daemon(sys.argv[1], config=config(os.path.join(probe_dir, "probes")),
                           procfs=tree.proc, sysfs=os.path.join(probe_dir, "tree", "sys")) as d:
            deadline, ready = time.monotonic() + 30, False
            while time.monotonic() < deadline and not ready:
                s = d.scrape()
                ready = (daemon.values(s, "iowatch_probe_baseline_runs", probe=JOB) == [2] and
                         daemon.completed_runs(s, JOB) >= 4)
                time.sleep(0.3)
            r.check(ready, "the probe job has a baseline and 4 runs", d.stderr()[-2000:])
            url = f"http://127.0.0.1:{d.port}/"
            # The tree writes uptime and diskstats one after the other: a sample can
            # read one before a step and the other after it, and show one interval's
            # rates a step off. Such a sample is the tree's, not the page's: load the
            # page again (up to 3 times, a sample apart) until sda shows a clean one.
            for _ in range(3):
                code, dom_text, err = chromium("--dump-dom", url)
                if '<td>sda</td><td class="n">100.00</td>' in dom_text:
                    break
                time.sleep(1.1)
            r.check(code == 0 and "<html" in dom_text.lower(), "chromium loads / (--dump-dom)",
                    err[-2000:])
            runs = int(daemon.completed_runs(d.scrape(), JOB))
            code, _, err = chromium("--hide-scrollbars", "--window-size=1280,900",
                                    f"--screenshot={screenshot}", url)
        dom = Dom()
        dom.feed(dom_text)

        devices = dom.tables.get("devices", [])
        rows = {row[0][1]: row for row in devices[1:] if row}
        exported = [n for n in names if n in rows]
        r.check(devices and len(devices[0]) == 11 and devices[0][10][1] == "health",
                "#devices has the 10 iostat headers and health", str(devices[:1]))
        r.check(exported and len(rows) == len(devices) - 1,
                f"#devices: one row per device ({len(rows)}: {sorted(rows)[:8]})")
        bad = [n for n, row in rows.items()
               if len(row) != 11 or not all(is_number(c[1]) for c in row[1:10])]
        r.check(not bad, "every device row has 9 numeric iostat cells", str(bad[:5]))
        # Each whole disk's health: "ok (SMART …)" or its first problem, in red, all of them in
        # the title. The fixture's disks are not this host's: smartctl finds none of them.
        health = {n: row[10] for n, row in rows.items() if len(row) == 11}
        unsaid = [n for n, cell in health.items()
                  if not (cell[1].startswith("ok (SMART ") and cell[2].get("class") == "good")
                  and not (cell[2].get("class") == "bad" and cell[2].get("title"))
                  and cell[1] != "-"]
        r.check(health and not unsaid, f"each disk's health is said ({health.get('sda', [''])[1:2]})",
                str({n: health[n] for n in unsaid}))
        # The tree moves 50 reads and 250 io ms per 0.5 s of uptime: 100 r/s, 50 %util.
        sda = [c[1] for c in rows.get("sda", [])]
        r.check(sda[1:2] == ["100.00"] and sda[8:9] == ["50.00"],
                "sda shows the rates the tree moves at (r/s 100.00, %util 50.00)", str(sda))
        missing = [n for n in rows if n not in names]
        r.check(not missing, "every row is a device of the fixture", str(missing))

        vm = dom.tables.get("vmstat", [])
        headers = [c[1] for c in vm[0]] if vm else []
        r.check(headers[:2] == ["r", "b"] and headers[-5:] == ["us", "sy", "id", "wa", "st"]
                and len(headers) == 17, "#vmstat has vmstat's 17 columns", str(headers))
        r.check(len(vm) == 2 and all(is_number(c[1]) for c in vm[1]),
                "#vmstat has one row of numbers", str(vm[1:]))

        probes = dom.tables.get("probes", [])
        job_rows = [row for row in probes[1:] if row and row[0][1] == JOB]
        r.check(len(job_rows) == 1, f"#probes has the job's row ({len(job_rows)})", str(probes))
        if job_rows:
            row = job_rows[0]
            cells = [c[1] for c in row]
            r.check(cells[1] == "read" and is_number(cells[3]) and float(cells[3]) > 0
                    and is_number(cells[4]), "the probe row: op, IOPS and baseline IOPS", str(cells))
            # ok, or regressed on this noisy disk: either way a judged state, not "learning".
            # "ok", or "ok (load band …)" / "ok (against …)" for a run beside others' load.
            state_ok = (((cells[9] == "ok" or cells[9].startswith("ok (")) and
                         row[9][2].get("class") == "good") or
                        (cells[9].startswith("regressed: ") and row[9][2].get("class") == "bad"))
            r.check(state_ok, f"the probe row's state is judged ({cells[9]})", str(cells))
            if cells[9].startswith("regressed: "):
                # Each regressed metric explains itself in a row under the job's.
                after = probes[probes.index(row) + 1:]
                told = [c[1] for c in after[0]] if after else []
                r.check(len(told) == 2 and told[0] == "" and "bad since " in told[1]
                        and " now: " in told[1],
                        "the regression's row says since when, against what and what its "
                        "disk shows now", str(told))
            r.check(len(cells) > 10 and re.match(r"\d+ % of \d+ runs; last ", cells[10]),
                    f"the share of the last day's runs judged ({cells[10] if len(cells) > 10 else ''})",
                    str(cells))
            points = row[-1][3]
            n_points = len(points[0].split()) if points else 0
            r.check(points and 4 <= n_points <= runs,
                    f"a sparkline with a point per run ({n_points} points, {runs} runs)")
        external = [l for l in dom.links if not l.startswith("/")]
        r.check(not external, "no external resources", str(external))
        r.check(any(m.get("http-equiv") == "refresh" for m in dom.meta), "the page refreshes itself")

        size = png_size(screenshot) if os.path.exists(screenshot) else None
        r.check(code == 0 and size == (1280, 900) and os.path.getsize(screenshot) > 10_000,
                f"screenshot saved: {screenshot} {size}", err[-2000:])
    finally:
        tree.stop.set()
        tree.join()
        shutil.rmtree(probe_dir, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
