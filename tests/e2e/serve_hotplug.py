#!/usr/bin/python3
"""`iowatch serve` on the live system while loop devices come and go (root).

The daemon runs on /proc and /sys with devices.exclude "" and a 500 ms
interval; a monitor thread scrapes every 200 ms and fails on any scrape error
or negative iowatch_iostat_* value. Three times: `losetup --find --show` a
64 MiB file, wait for device="loopN" rates, write and read 16 MiB with O_DIRECT
and see it in the counters and window maxima; `losetup -d` (the device stays
in /proc/diskstats and /sys/block, so in /metrics, until removed); remove it
(LOOP_CTL_REMOVE) and require its series gone within 4 intervals + 1 s. Then
detach, remove, re-add and re-attach at once: counters restart from zero
between two samples. `finally` detaches what was attached, restores the set of
loop device nodes (LOOP_CTL_ADD/REMOVE) and removes the temp files.

Usage: serve_hotplug.py IOWATCH_BINARY
"""
import contextlib
import errno
import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import daemon

INTERVAL = 0.5
CONFIG = 'sampling:\n  interval: 500ms\n  window: 10s\ndevices:\n  exclude: ""\n'
LOOP_CTL_ADD, LOOP_CTL_REMOVE = 0x4C80, 0x4C81
CYCLES, MIB = 3, 16


def loop_nodes():
    return {int(n[4:]) for n in os.listdir("/sys/block") if re.fullmatch(r"loop\d+", n)}


def loop_ctl(request, number):
    fd = os.open("/dev/loop-control", os.O_RDWR)
    try:
        for _ in range(40):  # udev or the last close may hold the device for a moment
            try:
                return fcntl.ioctl(fd, request, number)
            except OSError as e:
                if e.errno != errno.EBUSY:
                    raise
                time.sleep(0.05)
        raise OSError(errno.EBUSY, f"loop{number} stays busy")
    finally:
        os.close(fd)


@contextlib.contextmanager
def loop_device(backing, size, partscan=False):
    """A loop device (its path) over a new sparse file of `size` bytes (kept if it exists, for a
    partition table written first), partitions scanned with `partscan`; detached, and any node
    `losetup --find` added removed, on leaving."""
    nodes_before = loop_nodes()
    with open(backing, "ab") as f:
        f.truncate(max(size, os.path.getsize(backing)))
    dev = subprocess.run(["losetup", "--find", "--show", *(["-P"] if partscan else []), backing],
                         capture_output=True, text=True, check=True).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)
        for number in loop_nodes() - nodes_before:
            loop_ctl(LOOP_CTL_REMOVE, number)


def bound(number):
    return os.path.exists(f"/sys/block/loop{number}/loop/backing_file")


class Monitor(threading.Thread):
    def __init__(self, d):
        super().__init__(daemon=True)
        self.d, self.stop, self.scrapes, self.problems = d, threading.Event(), 0, []
        self.latest, self.resets = [], set()

    def run(self):
        while not self.stop.wait(0.2):
            try:
                samples = self.d.scrape()
            except Exception as e:  # noqa: BLE001 - any failure to scrape is a finding
                self.problems.append(f"scrape failed: {type(e).__name__}: {e}")
                continue
            self.scrapes += 1
            self.latest = samples
            self.resets |= {l["device"] for n, l, v in samples
                            if n == "iowatch_disk_counters_reset" and v == 1}
            self.problems += [f"{n}{l} = {v}" for n, l, v in samples
                              if n.startswith("iowatch_iostat_") and not v >= 0]


def wait_until(monitor, predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate(monitor.latest):
                return True
        except IndexError:  # a series not there yet
            pass
        time.sleep(0.1)
    return False


def attach(image, attached):
    dev = subprocess.run(["losetup", "--find", "--show", image], capture_output=True, text=True,
                         check=True).stdout.strip()
    attached.append(int(dev[len("/dev/loop"):]))
    return dev, os.path.basename(dev), attached[-1]


def dd(*args):
    subprocess.run(["dd", "bs=1M", f"count={MIB}", "status=none", *args], check=True)


def cycle(r, monitor, image, attached, removed):
    dev, name, number = attach(image, attached)
    has = lambda s, family, **l: daemon.values(s, family, device=name, **l)  # noqa: E731
    r.check(wait_until(monitor, lambda s: has(s, "iowatch_iostat_utilization_ratio"), 5),
            f"{name} attached: its series and rates appear")
    base = has(monitor.latest, "iowatch_disk_writes_completed_total")[0]
    dd("if=/dev/zero", f"of={dev}", "oflag=direct")
    dd(f"if={dev}", "of=/dev/null", "iflag=direct")
    seen = wait_until(monitor, lambda s: has(s, "iowatch_disk_written_bytes_total")[0]
                      >= MIB << 20 and has(s, "iowatch_disk_read_bytes_total")[0] >= MIB << 20
                      and has(s, "iowatch_iostat_bytes_per_second_window_max", op="write")[0] > 0
                      and has(s, "iowatch_iostat_bytes_per_second_window_max", op="read")[0] > 0, 5)
    s = monitor.latest
    rates = [v for n, l, v in s if n.startswith("iowatch_iostat_") and l.get("device") == name]
    r.check(seen and rates and min(rates) >= 0,
            f"{name}: {MIB} MiB written and read show in the counters (writes "
            f"{base:.0f} -> {has(s, 'iowatch_disk_writes_completed_total')[0]:.0f}) and window "
            f"maxima; {len(rates)} iostat values, none negative")
    subprocess.run(["losetup", "-d", dev], check=True)
    time.sleep(3 * INTERVAL)
    with open("/proc/diskstats") as f:
        in_diskstats = any(line.split()[2] == name for line in f)
    r.check(in_diskstats == bool(has(monitor.latest, "iowatch_disk_info")),
            f"{name} detached: reported iff still in /proc/diskstats ({in_diskstats})")
    loop_ctl(LOOP_CTL_REMOVE, number)
    removed.add(number)
    started = time.monotonic()
    # The kernel log's error counts are since boot, about devices that may be gone: history,
    # not the device's series (docs/metrics.md, "I/O errors").
    gone = wait_until(monitor, lambda s: not any(l.get("device") == name for n, l, _ in s
                                                 if not n.startswith("iowatch_kernel_")),
                      4 * INTERVAL + 1)
    r.check(gone and not os.path.exists(f"/sys/block/{name}"),
            f"{name} removed: its series disappear ({time.monotonic() - started:.1f} s)")
    r.check(monitor.d.alive() and monitor.d.get("/healthz")[0] == 200, "daemon up and healthy")


def fast_readd(r, monitor, image, attached, removed):
    """Detach, remove, re-add and re-attach at once: the counters restart from zero."""
    dev, name, number = attach(image, attached)
    dd("if=/dev/zero", f"of={dev}", "oflag=direct")
    seen = wait_until(monitor, lambda s: daemon.values(s, "iowatch_disk_written_bytes_total",
                                                       device=name)[0] >= MIB << 20, 5)
    subprocess.run(["losetup", "-d", dev], check=True)
    loop_ctl(LOOP_CTL_REMOVE, number)
    removed.add(number)
    loop_ctl(LOOP_CTL_ADD, number)
    subprocess.run(["losetup", dev, image], check=True)
    time.sleep(4 * INTERVAL)
    rates = [v for n, l, v in monitor.latest
             if n.startswith("iowatch_iostat_") and l.get("device") == name]
    r.check(seen and rates and min(rates) >= 0, f"{name} re-added within an interval (counters restart "
            f"from 0): rates, none negative (counters_reset seen: {name in monitor.resets})")
    subprocess.run(["losetup", "-d", dev], check=True)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    daemon.require_root("attaching loop devices")
    daemon.exit_on_sigterm()
    if shutil.which("losetup") is None or not os.path.exists("/dev/loop-control"):
        print("SKIP: no losetup or /dev/loop-control (loop driver not available)")
        return 77
    r = daemon.Results()
    before = loop_nodes()
    tmp = tempfile.mkdtemp(prefix="iowatch-e2e-hotplug-")
    attached, removed, monitor = [], set(), None
    try:
        image = os.path.join(tmp, "disk.img")
        with open(image, "wb") as f:
            f.truncate(64 << 20)
        with daemon.Daemon(sys.argv[1], config=CONFIG) as d:
            monitor = Monitor(d)
            monitor.start()
            for _ in range(CYCLES):
                cycle(r, monitor, image, attached, removed)
            fast_readd(r, monitor, image, attached, removed)
            monitor.stop.set()
            monitor.join(10)
            r.check(not monitor.problems, f"{monitor.scrapes} scrapes, none failed, no "
                    "iowatch_iostat_* value ever negative", "\n     ".join(monitor.problems[:10]))
            code, seconds = d.stop()
            r.check(code == 0, f"SIGTERM: exit 0 in {seconds:.2f} s", f"exit {code}")
    except Exception:  # noqa: BLE001 - reported as a failed check, then cleaned up
        r.check(False, "no unexpected error", traceback.format_exc())
    finally:
        if monitor is not None:
            monitor.stop.set()
        for number in attached:
            if bound(number):
                subprocess.run(["losetup", "-d", f"/dev/loop{number}"], check=False)
        for number in set(attached) | removed:
            try:
                if number in before and not os.path.exists(f"/sys/block/loop{number}"):
                    loop_ctl(LOOP_CTL_ADD, number)
                elif number not in before and os.path.exists(f"/sys/block/loop{number}"):
                    loop_ctl(LOOP_CTL_REMOVE, number)
            except OSError as e:
                print(f"cleanup: loop{number}: {e}")
        shutil.rmtree(tmp, ignore_errors=True)
    r.check(loop_nodes() == before, "loop device nodes restored as before the test",
            f"{sorted(before)} -> {sorted(loop_nodes())}")
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
