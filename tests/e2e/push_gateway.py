#!/usr/bin/python3
"""`iowatch probe` and `iowatch sweep --push-gateway` against Debian's prometheus-pushgateway.

A gateway on a free loopback port (no persistence file: in memory only), then:
1. `iowatch probe` (psync randread on 4 MiB under /var/tmp, JSON) pushed with a site label:
   the gateway holds iowatch_probe_iops{probe, op="read", job="iowatch_probe",
   instance=<hostname>, site} — the daemon's definition, I/Os over the exact runtime, so
   between total_ios over the JSON's whole-millisecond runtime + 1 ms and over it — the
   bandwidth in the same bounds and the same bytes per I/O, the clat histogram whose _count
   is the JSON's total_ios, and no daemon-only
   family (store_up, interval); the gateway's exposition passes promtool check metrics.
2. A second push to the same group, another job name: the first job's series are gone, the new
   one's are there; a metric PUT into the group by hand before is gone too (PUT replaces the
   whole group: POST would keep every metric of another name).
3. Grouping labels that a URL path mangles round-trip exactly: `x#` (a fragment), `?q` (a query),
   `..` (a dot segment), `a/b` (a separator: base64), `a b` (a space), `%41` (an escape); a value
   that is not UTF-8 is refused before the run (the gateway would answer 400, then 500 to every
   scrape of it).
4. `iowatch sweep` of one point (direct randread 4k QD1, 2 s, --no-store) pushed: its
   iowatch_sweep_iops{device, mode, rw, pattern, bs, iodepth} equals the sweep JSON's iops.
5. Errors: a closed port (results still printed, exit 2, "cannot connect"), a gateway that
   accepts and never answers (--push-timeout=2: exit 2 "no answer within 2 s" in < 10 s), a
   server answering 307 to the gateway (exit 2, "HTTP 307": nothing was pushed, nothing
   followed), a bad URL and a job label refused before anything runs.
Skips (77) when prometheus-pushgateway is not installed.

Usage: push_gateway.py IOWATCH
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer

import daemon


def http_get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def start_gateway(port):
    # --persistence.file= : Debian's default is /var/lib/prometheus/pushgateway.data, shared by
    # every gateway on the machine; a group one run left there (a label value the gateway
    # cannot serve) broke every later run's scrapes with 500.
    proc = subprocess.Popen(["prometheus-pushgateway", f"--web.listen-address=127.0.0.1:{port}",
                             "--persistence.file="],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 15
    while time.time() < deadline:
        try:
            http_get(f"http://127.0.0.1:{port}/-/ready")
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("prometheus-pushgateway did not become ready")


def series(text, name, **labels):
    """Values of `name` whose labels include `labels`."""
    found = []
    for sample_name, sample_labels, value in daemon.parse_metrics(text):
        if sample_name == name and all(sample_labels.get(k) == v for k, v in labels.items()):
            found.append(value)
    return found


def probe(iowatch, workdir, name, extra):
    return subprocess.run([iowatch, "probe", f"--name={name}", f"--directory={workdir}",
                           "--size=4m", "--rw=randread", "--bs=4k", "--output-format=json",
                           *extra], capture_output=True, text=True, timeout=120)


def http_put(url, body):
    req = urllib.request.Request(url, data=body.encode(), method="PUT")
    with urllib.request.urlopen(req, timeout=10) as answer:
        return answer.status


def check_probe(r, iowatch, workdir, gateway):
    host = socket.gethostname()
    stale = f"{gateway}/metrics/job/iowatch_probe/instance/{host}/site/e2e"
    r.check(http_put(stale, "# HELP iowatch_e2e_stale Left by hand.\n"
                                   "# TYPE iowatch_e2e_stale gauge\niowatch_e2e_stale 1\n") == 200,
            "a stale metric PUT into the group by hand")
    p = probe(iowatch, workdir, "pushed", [f"--push-gateway={gateway}", "--push-label=site=e2e"])
    r.check(p.returncode == 0, "probe pushed: exit 0", p.stderr)
    job = json.loads(p.stdout)["jobs"][0]["read"]
    text = http_get(gateway + "/metrics")
    labels = dict(probe="pushed", op="read", job="iowatch_probe", instance=host, site="e2e")
    seconds = job["runtime"] / 1000  # fio's whole milliseconds, rounded down
    iops = series(text, "iowatch_probe_iops", **labels)
    ios = job["total_ios"]
    r.check(len(iops) == 1 and ios / (seconds + 0.001) <= iops[0] <= ios / seconds * (1 + 1e-9),
            "the gateway holds the probe's iops", f"{iops} vs {ios} I/Os in {job['runtime']} ms")
    bw = series(text, "iowatch_probe_bandwidth_bytes_per_second", **labels)
    r.check(len(bw) == 1 and iops and abs(bw[0] / iops[0] - job["io_bytes"] / ios) < 1e-6,
            "and its bandwidth: the same bytes per I/O", f"{bw} vs {job['io_bytes']}")
    count = series(text, "iowatch_probe_clat_seconds_count", **labels)
    r.check(count == [job["total_ios"]], "and its clat histogram's count", f"{count}")
    r.check(not series(text, "iowatch_probe_store_up") and
            not series(text, "iowatch_probe_interval_seconds"), "no daemon-only family")
    if shutil.which("promtool"):
        c = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True)
        r.check(c.returncode == 0, "promtool check metrics on the gateway's exposition",
                c.stdout + c.stderr)
    p = probe(iowatch, workdir, "second", [f"--push-gateway={gateway}", "--push-label=site=e2e"])
    text = http_get(gateway + "/metrics")
    r.check(p.returncode == 0 and series(text, "iowatch_probe_iops", probe="second", site="e2e")
            and not series(text, "iowatch_probe_iops", probe="pushed", site="e2e"),
            "a second push replaces the group", p.stderr)
    r.check(not series(text, "iowatch_e2e_stale", site="e2e"),
            "the stale metric is gone: the push replaced the whole group (PUT)",
            "\n".join(line for line in text.splitlines() if "stale" in line))


def check_labels(r, iowatch, workdir, gateway):
    labels = {"fragment": "x#", "query": "?q", "dots": "..", "slash": "a/b", "space": "a b",
              "escape": "%41"}
    p = probe(iowatch, workdir, "labelled",
              [f"--push-gateway={gateway}"] + [f"--push-label={k}={v}" for k, v in labels.items()])
    r.check(p.returncode == 0, "labels that a URL mangles: pushed", p.stderr)
    text = http_get(gateway + "/metrics")
    got = [lbl for name, lbl, _ in daemon.parse_metrics(text)
           if name == "iowatch_probe_iops" and lbl.get("probe") == "labelled"]
    r.check(len(got) == 1 and all(got[0].get(k) == v for k, v in labels.items()),
            "and they round-trip exactly", f"{got}")
    p = subprocess.run([os.fsencode(iowatch), b"probe", b"--name=utf8", b"--size=4m",
                        os.fsencode(f"--directory={workdir}"),
                        os.fsencode(f"--push-gateway={gateway}"), b"--push-label=site=\xff"],
                       capture_output=True, timeout=60)
    r.check(p.returncode == 2 and b"UTF-8" in p.stderr and not p.stdout,
            "a label value that is not UTF-8 is refused before the run", p.stderr.decode(
                errors="replace"))


class Redirect(BaseHTTPRequestHandler):
    """Answers every request with 307 to the real gateway, as a moved or proxied one would."""
    target = ""

    def do_PUT(self):  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(307)
        self.send_header("Location", self.target + self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_PUT

    def log_message(self, *args):
        pass


def check_redirect(r, iowatch, workdir, gateway):
    Redirect.target = gateway
    server = HTTPServer(("127.0.0.1", 0), Redirect)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        p = probe(iowatch, workdir, "redirected",
                  [f"--push-gateway=http://127.0.0.1:{server.server_port}"])
    finally:
        server.shutdown()
        server.server_close()
    try:
        text = http_get(gateway + "/metrics")
    except urllib.error.HTTPError as e:  # a gateway holding an earlier bad push answers 500
        text = f"{e}"
    r.check(p.returncode == 2 and "HTTP 307" in p.stderr and
            not series(text, "iowatch_probe_iops", probe="redirected"),
            "a 307 answer is an error: nothing was pushed", p.stderr)


def check_sweep(r, iowatch, workdir, gateway):
    p = subprocess.run([iowatch, "sweep", f"--directory={workdir}", "--size=16m", "--bs=4k",
                        "--iodepth=1", "--rw=read", "--pattern=random", "--mode=direct",
                        "--budget=2s", "--no-store", "-o", "json",
                        f"--push-gateway={gateway}"], capture_output=True, text=True, timeout=120)
    r.check(p.returncode == 0, "sweep pushed: exit 0", p.stderr)
    if p.returncode != 0:
        return
    report = json.loads(p.stdout)
    sample = report["points"][0]
    text = http_get(gateway + "/metrics")
    got = series(text, "iowatch_sweep_iops", job="iowatch_sweep", mode="direct", rw="read",
                 pattern="random", bs="4096", iodepth="1", device=report["device"])
    want = sample["iops"]
    r.check(len(got) == 1 and abs(got[0] - want) <= 1e-6 * max(1, want),
            "the gateway holds the sweep point's iops", f"{got} vs {want}")


def check_errors(r, iowatch, workdir):
    closed = daemon.free_port()
    p = probe(iowatch, workdir, "nowhere", [f"--push-gateway=http://127.0.0.1:{closed}"])
    printed = p.stdout.strip().startswith("{") and json.loads(p.stdout)["jobs"]
    r.check(p.returncode == 2 and printed and "cannot connect" in p.stderr,
            "a closed port: results printed, exit 2, said", p.stderr)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)  # accepts the connection in the kernel, never answers
    start = time.time()
    p = probe(iowatch, workdir, "silent", [f"--push-gateway=http://127.0.0.1:{silent.getsockname()[1]}",
                                           "--push-timeout=2"])
    took = time.time() - start
    silent.close()
    r.check(p.returncode == 2 and "no answer within 2 s" in p.stderr and took < 10,
            f"a gateway that never answers: exit 2 after the timeout ({took:.1f} s)", p.stderr)
    p = probe(iowatch, workdir, "bad", ["--push-gateway=ftp://x"])
    r.check(p.returncode == 2 and "expected http://HOST" in p.stderr and not p.stdout,
            "a bad URL refused before the run", p.stderr)
    p = probe(iowatch, workdir, "bad", ["--push-gateway=http://127.0.0.1:1", "--push-label=job=x"])
    r.check(p.returncode == 2 and "--push-label: expected NAME=VALUE" in p.stderr and not p.stdout,
            "a job label refused before the run", p.stderr)


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    if not shutil.which("prometheus-pushgateway"):
        print("SKIP: prometheus-pushgateway is not installed (scripts/install-deps.sh installs it)")
        return 77
    iowatch = sys.argv[1]
    r = daemon.Results()
    workdir = tempfile.mkdtemp(prefix="iowatch-e2e-push-", dir="/var/tmp")
    port = daemon.free_port()
    gateway_proc = start_gateway(port)
    try:
        gateway = f"http://127.0.0.1:{port}"
        check_probe(r, iowatch, workdir, gateway)
        check_labels(r, iowatch, workdir, gateway)
        check_redirect(r, iowatch, workdir, gateway)
        check_sweep(r, iowatch, workdir, gateway)
        check_errors(r, iowatch, workdir)
    finally:
        gateway_proc.terminate()
        gateway_proc.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
