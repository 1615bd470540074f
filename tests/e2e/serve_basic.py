#!/usr/bin/python3
"""`iowatch serve` end to end: the endpoints on a fixture tree and on this machine.

For each of tests/fixtures/metrics-two-samples/s1 and the live /proc and /sys:
/metrics passes `promtool check metrics` silently and has the required
families; with Accept-Encoding: gzip it is gzip-encoded and decompresses to the
same kind of exposition; / is HTML listing every exported device; /healthz is
200 "ok"; an unknown path is 404; SIGTERM stops the daemon with exit code 0.
On the fixture the raw counters must equal the fixture's /proc/diskstats.
`iowatch check-config` exits 0 on config/iowatch.yaml and 2 with a
file:line:column message on broken files.

Usage: serve_basic.py IOWATCH_BINARY
"""
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback

import daemon

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURE = os.path.join(ROOT, "tests/fixtures/metrics-two-samples/s1")
FIXTURE_DEVICES = ["dm-0", "nvme0n1", "sda", "sdb", "sdc", "verylongdevicename0"]  # not loop0
REQUIRED = ["iowatch_disk_reads_completed_total", "iowatch_iostat_utilization_ratio",
            "iowatch_vm_cpu_ratio", "iowatch_meminfo_bytes", "iowatch_build_info",
            "iowatch_collector_success", "process_resident_memory_bytes"]
# Derived per-device series need two samples with moving counters: not on a frozen tree.
DERIVED = {"iowatch_iostat_utilization_ratio"}
BAD_CONFIGS = [  # (text, line, column of the offending node)
    ("sampling:\n  interval: fast\n", 2, 13),
    ("web:\n  read_timeout: 10s\n  max_connections: 64\n  bogus_key: 1\n", 4, 3),
    ("devices:\n  partitions: yes\n", 2, 15),
]


def diskstats_reads(path):
    with open(path) as f:
        return {fields[2]: int(fields[3]) for fields in map(str.split, f)}


# The fixture's dm-0 is not this host's: its thin pools are not asked of the host's dmsetup
# (which would answer for the host's kernel, or fail where it has no device-mapper).
FIXTURE_CONFIG = "collectors:\n  thin_pool:\n    dmsetup: /nonexistent/dmsetup\n"


def check_endpoints(r, binary, label, procfs=None, sysfs=None):
    config = FIXTURE_CONFIG if sysfs else None
    with daemon.Daemon(binary, config=config, procfs=procfs, sysfs=sysfs) as d:
        d.scrape_after_next_sample()  # rates (iostat_*, vm_*) need two samples
        status, headers, body = d.get("/metrics")
        text = body.decode()
        r.check(status == 200 and headers.get("content-type", "").startswith("text/plain"),
                f"{label}: /metrics 200 text/plain ({len(body)} bytes)", f"{status} {headers}")
        ok, out = daemon.promtool_check(text)
        r.check(ok, f"{label}: promtool check metrics exits 0 and prints nothing", out)
        samples = daemon.parse_metrics(text)
        names = {n for n, _, _ in samples}
        for family in REQUIRED:
            if family in DERIVED and procfs:
                continue
            r.check(family in names, f"{label}: family {family} present")
        collectors = {l["collector"]: v for n, l, v in samples if n == "iowatch_collector_success"}
        r.check(collectors and all(v == 1 for v in collectors.values()),
                f"{label}: every collector succeeded {sorted(collectors)}", str(collectors))
        r.check(daemon.values(samples, "process_resident_memory_bytes")[0] > 1e6,
                f"{label}: process_resident_memory_bytes > 1 MB")
        devices = sorted({l["device"] for n, l, _ in samples if n == "iowatch_disk_info"})
        r.check(devices, f"{label}: devices exported: {devices}")
        if procfs:
            r.check(devices == FIXTURE_DEVICES, f"{label}: exactly the fixture's whole disks "
                    "(loop0 excluded by default)", f"{devices}")
            expected = diskstats_reads(os.path.join(procfs, "diskstats"))
            got = {l["device"]: v for n, l, v in samples if n == "iowatch_disk_reads_completed_total"}
            r.check(all(got[k] == expected[k] for k in got) and got,
                    f"{label}: iowatch_disk_reads_completed_total equals diskstats field 4",
                    f"{got} vs {expected}")

        status, headers, body = d.get("/metrics", {"Accept-Encoding": "gzip"})
        r.check(status == 200 and headers.get("content-encoding") == "gzip"
                and "Accept-Encoding" in headers.get("vary", ""),
                f"{label}: gzip asked -> Content-Encoding: gzip, Vary: Accept-Encoding "
                f"({len(body)} bytes)", str(headers))
        try:
            unzipped = gzip.decompress(body).decode()
            names_gz = {n for n, _, _ in daemon.parse_metrics(unzipped)}
            ok, out = daemon.promtool_check(unzipped)
        except (OSError, ValueError) as e:
            names_gz, ok, out = set(), False, str(e)
        r.check(ok and names_gz == names, f"{label}: gzip body decompresses to a valid "
                "exposition with the same families", out)
        status, headers, _ = d.get("/metrics", {"Accept-Encoding": "gzip;q=0, identity"})
        r.check(status == 200 and "content-encoding" not in headers,
                f"{label}: gzip;q=0 -> not compressed", str(headers))

        status, headers, body = d.get("/")
        html = body.decode()
        r.check(status == 200 and headers.get("content-type", "").startswith("text/html")
                and html.lstrip().lower().startswith("<!doctype html"), f"{label}: / is HTML")
        missing = [dev for dev in devices if f"<td>{dev}</td>" not in html]
        r.check(not missing and f"Devices ({len(devices)})" in html,
                f"{label}: / lists every exported device", f"missing {missing}")
        status, _, body = d.get("/healthz")
        r.check(status == 200 and body == b"ok\n", f"{label}: /healthz 200 ok", f"{status} {body!r}")
        status, _, _ = d.get("/no/such/page")
        r.check(status == 404, f"{label}: unknown path 404", str(status))
        code, seconds = d.stop()
        r.check(code == 0 and seconds < 2.0, f"{label}: SIGTERM -> exit 0 in {seconds:.2f} s",
                f"exit {code}\n{d.stderr()}")


def check_config_command(r, binary, tmp):
    run = subprocess.run([binary, "check-config", os.path.join(ROOT, "config/iowatch.yaml")],
                         capture_output=True, text=True, timeout=30)
    r.check(run.returncode == 0, "check-config config/iowatch.yaml exits 0",
            f"exit {run.returncode}: {run.stdout}{run.stderr}")
    for i, (text, line, column) in enumerate(BAD_CONFIGS):
        path = os.path.join(tmp, f"bad{i}.yaml")
        with open(path, "w") as f:
            f.write(text)
        run = subprocess.run([binary, "check-config", path], capture_output=True, text=True,
                             timeout=30)
        out = run.stdout + run.stderr
        where = re.search(re.escape(path) + r":(\d+):(\d+): ", out)
        r.check(run.returncode == 2 and where and (int(where[1]), int(where[2])) == (line, column),
                f"check-config on bad file #{i} exits 2 naming {os.path.basename(path)}:{line}:{column}",
                f"exit {run.returncode}: {out.strip()}")


def check_config_fails_where_serve_would(r, binary, tmp):
    """check-config refuses what serve would refuse at start (found by
    adversarial testing): TLS files that are missing or not PEM, a config
    that is /dev/zero or a FIFO (refused at once, never read forever)."""
    garbage = os.path.join(tmp, "garbage.pem")
    with open(garbage, "w") as f:
        f.write("not a certificate\n")
    cases = [
        ("web: {tls: {cert_file: /nonexistent/cert.pem, key_file: /nonexistent/key.pem}}\n",
         "/nonexistent/cert.pem: cannot read TLS certificate file: No such file or directory"),
        (f"web: {{tls: {{cert_file: {garbage}, key_file: {garbage}}}}}\n",
         f"{garbage}: not a usable PEM certificate"),
    ]
    for i, (text, expected) in enumerate(cases):
        path = os.path.join(tmp, f"tls{i}.yaml")
        with open(path, "w") as f:
            f.write(text)
        run = subprocess.run([binary, "check-config", path], capture_output=True, text=True,
                             timeout=30)
        r.check(run.returncode == 2 and expected in run.stderr,
                f"check-config fails on TLS case {i} as serve would: {expected}",
                f"exit {run.returncode}: {run.stdout}{run.stderr}")
    fifo = os.path.join(tmp, "fifo.yaml")
    os.mkfifo(fifo)
    for path, expected in [("/dev/zero", "expected a regular file, found a character device"),
                           (fifo, "expected a regular file, found a FIFO")]:
        run = subprocess.run([binary, "check-config", path], capture_output=True, text=True,
                             timeout=10)
        r.check(run.returncode == 2 and expected in run.stderr,
                f"check-config {path} exits 2 at once: {expected}",
                f"exit {run.returncode}: {run.stdout}{run.stderr}")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    daemon.exit_on_sigterm()
    binary = os.path.abspath(sys.argv[1])
    if shutil.which("promtool") is None:
        print("SKIP: promtool not installed (Debian package prometheus)")
        return 77
    r = daemon.Results()
    tmp = tempfile.mkdtemp(prefix="iowatch-e2e-basic-")
    try:
        check_endpoints(r, binary, "fixture", os.path.join(FIXTURE, "proc"),
                        os.path.join(FIXTURE, "sys"))
        check_endpoints(r, binary, "live")
        check_config_command(r, binary, tmp)
        check_config_fails_where_serve_would(r, binary, tmp)
    except Exception:  # noqa: BLE001 - reported as a failed check, then cleaned up
        r.check(False, "no unexpected error", traceback.format_exc())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
