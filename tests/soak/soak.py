#!/usr/bin/python3
"""Soak: `iowatch serve` under everything at once, for a long time.

The bundled config's probe jobs every 10 s (2 s runs), scrapes every second from
three clients (one plain, two with gzip), SIGHUP every minute alternating a good
and a bad config (the bad one must be refused and the daemon keep serving), and,
as root, a loop device attached and the previous one detached every 30 s (the
sampler's hotplug path). Every 10 s it records the daemon's RSS, open fds (but the
processes' /proc/PID files kept open while each lives),
threads, CPU seconds, the store's size and the scrapes' latency p99; at the end
it writes them as CSV and one SVG chart per figure to --out.

Pass (after the warm-up, the first fifth of the run): RSS growth <= 1 MiB (the
median of a minute's records at the end against the same after warm-up; runs
of 10 minutes or more: in shorter ones the allocator's arenas still fill), fd
and thread counts flat (threads the same at the end as after warm-up; the fewest
fds of a minute's records at most 2 above the same after warm-up: a probe run or
a loop device change holds a few for a moment), 0 failed scrapes, the daemon alive, 0 lost
runs (every ok run the metrics counted is in the store), the store's bytes per
stored run steady (no growth beyond the runs themselves).

Usage: soak.py IOWATCH_BINARY [--minutes=60] [--out=DIR] [--every-scale=1]
  --every-scale divides the SIGHUP and loop-device periods (the CI version runs
  1 minute with --every-scale=6: a SIGHUP every 10 s, a loop device every 5 s).
"""
import gzip
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import daemon  # noqa: E402

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BAD_CONFIG = "probes:\n  enabled: true\n  jobs: [\n"  # invalid YAML: refused on SIGHUP


def good_config():
    with open(os.path.join(SOURCE, "config", "iowatch.yaml")) as f:
        text = f.read()
    text = text.replace("every: 15m", "every: 10s").replace("jitter: 1m", "jitter: 2s")
    text = text.replace("runtime: 3s", "runtime: 2s").replace("timeout: 1m", "timeout: 30s")
    text = text.replace("busy_threshold: 0.5", "busy_threshold: 1")
    return text


class Scrapers:
    """Three clients scraping every second; latencies and failures per window."""

    def __init__(self, d, clients=3):
        self.d, self.lock, self.stop = d, threading.Lock(), threading.Event()
        self.latencies, self.failures, self.count = [], [], 0
        self.threads = [threading.Thread(target=self.run, args=(i % 3 != 0,), daemon=True)
                        for i in range(clients)]

    def start(self):
        for t in self.threads:
            t.start()

    def run(self, use_gzip):
        headers = {"Accept-Encoding": "gzip"} if use_gzip else {}
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                status, hdrs, body = self.d.get("/metrics", headers=headers, timeout=10)
                if use_gzip and hdrs.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                ok = status == 200 and b"iowatch_build_info" in body
                error = None if ok else f"status {status}"
            except Exception as e:  # noqa: BLE001 - any failure counts
                error = repr(e)
            with self.lock:
                self.count += 1
                if error:
                    self.failures.append((time.monotonic(), error))
                else:
                    self.latencies.append(time.monotonic() - t0)
            self.stop.wait(max(0.0, 1.0 - (time.monotonic() - t0)))

    def take_p99(self):
        with self.lock:
            values, self.latencies = sorted(self.latencies), []
        return values[min(len(values) - 1, int(0.99 * len(values)))] if values else 0.0


class LoopDevices:
    """Attaches a fresh loop device and detaches the previous one (root only)."""

    def __init__(self, workdir):
        self.backing = os.path.join(workdir, "loop-backing.img")
        with open(self.backing, "wb") as f:
            f.truncate(16 << 20)
        self.current = None
        self.changes = 0

    def change(self):
        new = subprocess.run(["losetup", "-f", "--show", self.backing], capture_output=True,
                             text=True)
        if new.returncode == 0:
            self.detach()
            self.current = new.stdout.strip()
            self.changes += 1

    def detach(self):
        if self.current:
            subprocess.run(["losetup", "-d", self.current], capture_output=True)
            self.current = None


def proc_figures(pid):
    figures = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "Threads"):
                figures[key] = int(value.split()[0])
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    figures["cpu_s"] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    figures["fds"] = own_descriptors(pid)
    return figures


def own_descriptors(pid):
    """The daemon's descriptors but the processes' /proc/PID files, which it keeps open while
    each process lives: their number follows the host's processes, not a leak."""
    return sum(not daemon.KEPT_PROCESS_FILE.match(t) for t in daemon.descriptor_targets(pid))


def store_bytes(state):
    return sum(os.path.getsize(os.path.join(state, n)) for n in os.listdir(state)
               if n.startswith("iowatch.db"))


def stored_ok_runs(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("SELECT COUNT(*) FROM runs WHERE result = 'ok'").fetchone()[0]
    finally:
        con.close()


def svg_chart(title, unit, xs, ys):
    """A self-contained line chart, 640x240."""
    w, h, left, bottom = 640, 240, 70, 30
    x_max = max(xs) or 1
    y_min, y_max = min(ys), max(ys)
    if y_max == y_min:
        y_min, y_max = y_min - 1, y_max + 1
    def px(x):
        return left + (w - left - 10) * x / x_max
    def py(y):
        return h - bottom - (h - bottom - 25) * (y - y_min) / (y_max - y_min)
    points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, ys))
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">
<rect width="{w}" height="{h}" fill="white"/>
<text x="{left}" y="15" font-size="13">{title}</text>
<line x1="{left}" y1="{h - bottom}" x2="{w - 10}" y2="{h - bottom}" stroke="#888"/>
<line x1="{left}" y1="25" x2="{left}" y2="{h - bottom}" stroke="#888"/>
<text x="{left - 5}" y="{py(y_max) + 4:.1f}" text-anchor="end">{y_max:.4g} {unit}</text>
<text x="{left - 5}" y="{py(y_min) + 4:.1f}" text-anchor="end">{y_min:.4g} {unit}</text>
<text x="{left}" y="{h - 10}">0</text>
<text x="{w - 10}" y="{h - 10}" text-anchor="end">{x_max / 60:.0f} min</text>
<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="{points}"/>
</svg>
"""


def write_outputs(out, rows):
    os.makedirs(out, exist_ok=True)
    keys = ["t_s", "rss_kib", "fds", "threads", "cpu_s", "store_bytes", "scrape_p99_ms"]
    with open(os.path.join(out, "soak.csv"), "w") as f:
        f.write(",".join(keys) + "\n")
        for row in rows:
            f.write(",".join(f"{row[k]:.6g}" for k in keys) + "\n")
    units = {"rss_kib": "KiB", "fds": "", "threads": "", "cpu_s": "s", "store_bytes": "B",
             "scrape_p99_ms": "ms"}
    xs = [row["t_s"] for row in rows]
    for key, unit in units.items():
        with open(os.path.join(out, f"soak-{key}.svg"), "w") as f:
            f.write(svg_chart(key.replace("_", " "), unit, xs, [row[key] for row in rows]))


def main():
    daemon.exit_on_sigterm()
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opts = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    if len(args) != 1:
        print(__doc__)
        return 2
    minutes, scale = float(opts.get("minutes", 60)), float(opts.get("every-scale", 1))
    out = opts.get("out", "soak-out")
    tempfile.tempdir = "/var/tmp"
    r = daemon.Results()
    d = daemon.Daemon(args[0], config="")  # the real config is written below
    d.config = good_config()
    loops = LoopDevices(d.dir) if os.geteuid() == 0 else None
    if loops is None:
        print("note: not root, no loop devices attached and detached")
    rows, hups, refused = [], 0, 0
    with d:
        scrapers = Scrapers(d)
        scrapers.start()
        start = time.monotonic()
        end = start + minutes * 60
        next_record, next_hup, next_loop = start + 10, start + 60 / scale, start + 30 / scale
        try:
            while time.monotonic() < end and d.alive():
                now = time.monotonic()
                if now >= next_hup:
                    hups += 1
                    bad = hups % 2 == 0
                    d.write_config(BAD_CONFIG if bad else good_config())
                    d.send(signal.SIGHUP)
                    refused += bad
                    next_hup += 60 / scale
                if loops and now >= next_loop:
                    loops.change()
                    next_loop += 30 / scale
                if now >= next_record:
                    figures = proc_figures(d.proc.pid)
                    rows.append({"t_s": now - start, "rss_kib": figures["VmRSS"],
                                 "fds": figures["fds"], "threads": figures["Threads"],
                                 "cpu_s": figures["cpu_s"],
                                 "store_bytes": store_bytes(os.path.join(d.dir, "state")),
                                 "scrape_p99_ms": scrapers.take_p99() * 1000})
                    next_record += 10
                time.sleep(0.1)
        finally:
            scrapers.stop.set()
            for t in scrapers.threads:
                t.join(15)
            if loops:
                loops.detach()
        alive = d.alive()
        r.check(alive, "the daemon is alive at the end", d.stderr()[-3000:])
        samples = d.scrape() if alive else []
        # Completed runs are counted "ok" or, beside others' I/O, "contended"; the
        # store keeps both as ok runs.
        counted_ok = daemon.completed_runs(samples)
        stored_ok = stored_ok_runs(os.path.join(d.dir, "state", "iowatch.db"))
        refusals = d.stderr().count("config reload failed")
        code, _ = d.stop(timeout=30)
    write_outputs(out, rows)
    warm_at = max(1, len(rows) // 5) - 1
    warm = rows[warm_at] if rows else None
    last = rows[-1] if rows else None
    r.check(len(rows) >= 3, f"{len(rows)} records taken")
    if warm and last:
        # A probe run's buffers (8 MiB for seqread-1m-qd8) are resident while
        # it runs: one record can land in one. The median of a minute's
        # records is the daemon's floor, and a leak raises the floor.
        warm_rss = median_rss(rows[max(0, warm_at - 5):warm_at + 1])
        last_rss = median_rss(rows[-6:])
        growth = last_rss - warm_rss
        rss = (f"RSS after warm-up {warm_rss} KiB, at the end {last_rss} KiB (medians of a "
               f"minute's records; growth {growth} KiB <= 1024)")
        if minutes >= 10:
            r.check(growth <= 1024, rss)
        else:  # the allocator's arenas still fill in the first minutes
            print(f"note: {rss}: judged only in runs of 10 minutes or more")
        r.check(last["threads"] == warm["threads"],
                f"threads flat: {warm['threads']} after warm-up, {last['threads']} at the end")
        # A probe run holds its file and ring open: one record can land in a
        # run, another between two (CI once saw 15, then 12). The fewest of a
        # minute's records is the daemon's floor, and a leak raises the floor.
        warm_fds = min(row["fds"] for row in rows[max(0, warm_at - 5):warm_at + 1])
        last_fds = min(row["fds"] for row in rows[-6:])
        r.check(last_fds - warm_fds <= 2,
                f"fds flat: at least {warm_fds} after warm-up, {last_fds} at the end (the fewest "
                f"of a minute's records)")
        cpu_per_min = (last["cpu_s"] - warm["cpu_s"]) / max(1e-9, (last["t_s"] - warm["t_s"]) / 60)
        p99 = max(row["scrape_p99_ms"] for row in rows)
        print(f"note: CPU {cpu_per_min:.2f} s per minute after warm-up; scrape p99 at most "
              f"{p99:.1f} ms; store {last['store_bytes']} bytes for {stored_ok} ok runs "
              f"({last['store_bytes'] / max(1, stored_ok):.0f} B per run); {hups} SIGHUPs "
              f"({refused} bad configs), {loops.changes if loops else 0} loop device changes; "
              f"{scrapers.count} scrapes")
    r.check(not scrapers.failures, f"0 failed scrapes of {scrapers.count}",
            str(scrapers.failures[:5]))
    r.check(counted_ok == stored_ok and stored_ok > 0,
            f"0 lost runs: {int(counted_ok)} completed runs counted (ok + contended), "
            f"{stored_ok} stored")
    r.check(refused == 0 or refusals >= 1, f"bad configs refused and logged ({refusals} lines)")
    r.check(code == 0, f"SIGTERM at the end: exit {code}")
    return r.finish()


def median_rss(rows):
    values = sorted(row["rss_kib"] for row in rows)
    return values[len(values) // 2]


if __name__ == "__main__":
    sys.exit(main())
