#!/usr/bin/python3
"""Per-cgroup I/O and host pressure, live (root): a fio read started in a new cgroup is
attributed to that cgroup in /metrics, and the host's I/O pressure grows under it.

The cgroup is created where this kernel counts I/O per cgroup: under cgroup v2 when the
unified root has the io controller (no rule needed), else under v1 blkio with a read throttle
rule far above the device's speed (v1 counts a child cgroup only where a rule exists:
docs/metrics.md). fio reads 64 MiB with O_DIRECT from a file on the disk under /var/tmp; the
cgroup's iowatch_cgroup_io_read_bytes_total on that disk must equal fio's io_bytes within 1 %,
its rate series and unit label must be there, `iowatch iotop` must list it first, the status
page's Top I/O table must show it, and iowatch_pressure_io_waiting_seconds_total
must grow. Then a 10 s fio read in a cgroup of systemd's tree (the unified hierarchy) with no
throttle rule is attributed through /proc/PID/io (iowatch_cgroup_process_read_bytes_total)
within 15 % of fio's bytes. Everything created (cgroups, the file) is removed.

Usage: serve_cgroup_io.py IOWATCH_BINARY
"""
import html
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import daemon

SIZE = 64 << 20


def mounts():
    """(v2 mount or None, v2 has io, v1 blkio mount or None) from /proc/self/mountinfo."""
    unified = blkio = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            dash = fields.index("-")
            fstype, super_options = fields[dash + 1], fields[dash + 3].split(",")
            if fstype == "cgroup2" and unified is None:
                unified = fields[4]
            elif fstype == "cgroup" and "blkio" in super_options and blkio is None:
                blkio = fields[4]
    has_io = False
    if unified:
        with open(os.path.join(unified, "cgroup.controllers")) as f:
            has_io = "io" in f.read().split()
    return unified, has_io, blkio


def whole_disk(path):
    """'major:minor' of the whole disk holding `path`."""
    st = os.stat(path)
    majmin = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    link = os.path.realpath(f"/sys/dev/block/{majmin}")
    if os.path.exists(os.path.join(link, "partition")):
        with open(os.path.join(os.path.dirname(link), "dev")) as f:
            return f.read().strip(), os.path.basename(os.path.dirname(link))
    return majmin, os.path.basename(link)


class Cgroup:
    """`relative` created under `root` (parents too); removed, with its parents, at the end."""

    def __init__(self, root, relative):
        self.root, self.relative = root, relative
        self.created = []

    def __enter__(self):
        path = self.root
        for part in self.relative.split("/"):
            path = os.path.join(path, part)
            if not os.path.isdir(path):
                os.mkdir(path)
                self.created.append(path)
        self.path = path
        return self

    def __exit__(self, *exc):
        for path in reversed(self.created):
            for _ in range(50):  # a process that just exited may still be listed
                try:
                    os.rmdir(path)
                    break
                except OSError:
                    time.sleep(0.1)


def fio_command(filename, size):
    return (f"fio --name=cg --filename={filename} --size={size} --rw=read --bs=1M --direct=1 "
            f"--ioengine=psync --output-format=json")


def run_fio_for(cgroup_path, filename, seconds):
    """fio's JSON of a time-based O_DIRECT random read of `seconds` from inside the cgroup, run
    by a shell that stays 3 s after it: the shell reaps fio and the kernel adds fio's counts to
    the shell's /proc/PID/io, which a reading then sees (counted once: what fio did while seen,
    and its last interval through the shell)."""
    script = (f"echo $$ > {cgroup_path}/cgroup.procs && fio --name=p --filename={filename} "
              f"--size={SIZE} --rw=randread --bs=64k --direct=1 --ioengine=psync "
              f"--time_based=1 --runtime={seconds} --output-format=json && sleep 3")
    out = subprocess.run(["sh", "-c", script], check=True, capture_output=True, text=True,
                         timeout=120).stdout
    return json.loads(out[out.index("{"):])


def run_fio_in(cgroup_path, filename):
    """fio's JSON of a 64 MiB O_DIRECT sequential read run from inside the cgroup. The same job
    runs first, 1 MiB, outside it: fio's binary and libraries (about 20 MB here) are then in
    the page cache, and the cgroup reads only what fio measures."""
    subprocess.run(["sh", "-c", fio_command(filename, 1 << 20)], check=True,
                   capture_output=True, timeout=60)
    script = f"echo $$ > {cgroup_path}/cgroup.procs && exec {fio_command(filename, SIZE)}"
    out = subprocess.run(["sh", "-c", script], check=True, capture_output=True, text=True,
                         timeout=120).stdout
    return json.loads(out[out.index("{"):])


def check_process_io(r, d, unified, relative, filename):
    """A 10 s read in a unit's cgroup of systemd's tree, without a throttle rule, attributed
    through /proc/PID/io: all of it, once, however late the readings come (a busy machine)."""
    if unified is None:
        r.check(False, "a unified (v2) mount holds systemd's tree for /proc/PID/cgroup")
        return
    with Cgroup(unified, relative) as cg:
        fio = run_fio_for(cg.path, filename, 10)
        fio_bytes = fio["jobs"][0]["read"]["io_bytes"]
        after = d.scrape_after_next_sample()
        counted = daemon.values(after, "iowatch_cgroup_process_read_bytes_total",
                                cgroup=relative, unit="fio-load.service")
        # 1 %: besides fio's reads, its own start (the binary is in the page cache already).
        r.check(len(counted) == 1 and abs(counted[0] - fio_bytes) <= 0.01 * fio_bytes,
                f"/proc/PID/io: the cgroup read {fio_bytes} bytes in 10 s per fio, iowatch says "
                f"{counted}")
        r.check(daemon.values(after, "iowatch_collector_success", collector="process_io") == [1],
                "collector process_io succeeds")


def main():
    daemon.require_root("creating cgroups")
    daemon.exit_on_sigterm()
    binary = sys.argv[1]
    r = daemon.Results()
    unified, v2_io, blkio = mounts()
    root = unified if v2_io else blkio
    if root is None:
        r.check(False, "a cgroup hierarchy counting I/O is mounted", f"v2 {unified}, v1 {blkio}")
        return r.finish()
    relative = f"iowatch-e2e-{os.getpid()}.slice/fio-load.service"
    work = tempfile.mkdtemp(prefix="iowatch-cg-", dir="/var/tmp")
    try:
        majmin, disk = whole_disk(work)
        filename = os.path.join(work, "data")
        with open(filename, "wb") as f:  # written outside the cgroup: only its reads count there
            for _ in range(SIZE >> 20):
                f.write(os.urandom(1 << 20))
            os.fsync(f.fileno())
        config = ("probes:\n  enabled: false\ncgroups:\n  include: 'iowatch-e2e-.*'\n"
                  "  process_interval: 1s\n")
        with Cgroup(root, relative) as cg, daemon.Daemon(binary, config=config) as d:
            if not v2_io:  # v1 counts only where a throttle rule exists: one far above the disk
                with open(os.path.join(cg.path, "blkio.throttle.read_bps_device"), "w") as f:
                    f.write(f"{majmin} {1 << 40}\n")
            before = d.scrape_after_next_sample()
            # `iowatch iotop` over the same read: 1 s reports, JSON; fio starts once the first
            # has come (on a busy machine iotop's start takes longer than any fixed delay).
            iotop = subprocess.Popen([binary, "iotop", "-o", "JSON", "--depth", "2", "1", "4"],
                                     stdout=subprocess.PIPE, text=True)
            first_report = iotop.stdout.readline()
            fio = run_fio_in(cg.path, filename)
            fio_bytes = fio["jobs"][0]["read"]["io_bytes"]
            after = d.scrape_after_next_sample()
            # The status page from the sample whose interval holds the read: its Top I/O table.
            page = d.get("/")[2].decode()
            table = page[page.find('id="top-io"'):]
            table = table[:table.find("</table>")]
            r.check(html.escape(relative) in table,
                    "the status page's Top I/O table lists the cgroup", table[:1500])
            after = d.scrape_after_next_sample()  # a full interval after fio ended
            counted = daemon.values(after, "iowatch_cgroup_io_read_bytes_total", cgroup=relative,
                                    device=disk)
            r.check(len(counted) == 1 and abs(counted[0] - fio_bytes) <= 0.01 * fio_bytes,
                    f"{'v2 io.stat' if v2_io else 'v1 blkio (with a rule)'}: the cgroup read "
                    f"{fio_bytes} bytes per fio, iowatch says {counted}")
            r.check(daemon.values(after, "iowatch_cgroup_io_reads_total", cgroup=relative,
                                  device=disk, unit="fio-load.service"),
                    "its requests are labelled with the unit fio-load.service")
            r.check(daemon.values(after, "iowatch_cgroup_io_bytes_per_second_window_max",
                                  cgroup=relative, device=disk, op="read") and
                    max(daemon.values(after, "iowatch_cgroup_io_bytes_per_second_window_max",
                                      cgroup=relative, device=disk, op="read")) > 0,
                    "its read rate's window maximum is above 0")
            r.check(daemon.values(after, "iowatch_collector_success", collector="cgroup") == [1],
                    "collector cgroup succeeds")
            lines = [first_report] + iotop.communicate(timeout=30)[0].splitlines()
            reports = [json.loads(line) for line in lines if line.strip()]
            # Listed while it reads, above every cgroup that read less: another test's reader
            # on this machine may rank above it, never a quieter one.
            ranked = [[c for c in rep["cgroups"] if c["read_bytes_per_second"] > 0]
                      for rep in reports]
            places = [[c["cgroup"] for c in rep].index(relative) for rep in ranked
                      if relative in [c["cgroup"] for c in rep]]
            ordered = all(a["read_bytes_per_second"] + a.get("write_bytes_per_second", 0) >=
                          b["read_bytes_per_second"] + b.get("write_bytes_per_second", 0)
                          for rep in ranked for a, b in zip(rep, rep[1:]))
            r.check(iotop.returncode == 0 and places and ordered,
                    f"iowatch iotop lists the cgroup while it reads, busiest first "
                    f"(its places: {places})")
            waited = [daemon.values(s, "iowatch_pressure_io_waiting_seconds_total")
                      for s in (before, after)]
            r.check(all(len(w) == 1 for w in waited) and waited[1][0] > waited[0][0],
                    f"host io pressure (some) grew under the read: {waited}")
            check_process_io(r, d, unified, relative, filename)
            ok, out = daemon.promtool_check(d.get("/metrics")[2].decode())
            r.check(ok, "promtool check metrics is silent", out)
    except Exception:
        traceback.print_exc()
        r.check(False, "no exception")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    r.check(not os.path.exists(os.path.join(root, relative.split("/")[0])),
            "the cgroups are removed")
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
