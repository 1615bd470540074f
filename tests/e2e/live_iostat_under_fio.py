#!/usr/bin/python3
"""Compares live `iowatch iostat -x` figures with sysstat's iostat while fio loads the disk.

compare_iostat.py checks arithmetic and layouts on frozen fixtures; this checks
the live path: real /proc/diskstats, intervals and uptime deltas on a busy disk.
A scratch directory is made under --dir (default: the current directory; ctest
runs in the build tree, on the real disk); its st_dev maps to /sys/dev/block/M:m
and, for a partition, to its parent disk (both are then named and compared).
fio runs 4k direct random reads/writes on a file there, then
`iostat -x -y -o JSON DISK 1 3` and the same iowatch command are started back
to back and their three one-second reports are compared.

Both tools sample the same kernel counters a few milliseconds apart, so the
rates differ by the load that fell into that skew. Rule: for each column,
|iowatch - ref| <= 5% * max(|ref|, 1.0), i.e. 5% relative once the reference
exceeds 1.0 and an absolute 0.05 below it (awaits are often < 1 ms). The load
must be real (reference r/s and w/s > 50) and the JSON documents must have
the same keys in the same order and the same number of reports. A failed
comparison is repeated once under the same load: a scheduling hiccup on a small
machine can put a burst into one tool's window and not the other's (r_await and
aqu-sz, weighted by the queue depth, show it first); a real difference fails twice.

Usage: live_iostat_under_fio.py IOWATCH_BINARY [--dir PARENT] [--seconds N]
Exits 77 (skip) when fio or iostat is missing or the directory is not backed
by a block device (tmpfs, overlay, btrfs subvolume...).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import signal
import tempfile
import time

COLUMNS = ["r/s", "w/s", "rkB/s", "wkB/s", "r_await", "w_await",
           "rareq-sz", "wareq-sz", "aqu-sz", "util"]
REL, FLOOR, MIN_IOPS = 0.05, 1.0, 50.0


def block_devices(path):
    """Names to report on: [disk] or [disk, partition]; None when not block-backed."""
    st = os.stat(path)
    node = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    if not os.path.exists(node):
        return None
    real = os.path.realpath(node)
    if os.path.exists(os.path.join(real, "partition")):
        return [os.path.basename(os.path.dirname(real)), os.path.basename(real)]
    return [os.path.basename(real)]


def ios_done(disk):
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if fields[2] == disk:
                return int(fields[3]) + int(fields[7])
    return 0


def entry(report, dev):
    return next((d for d in report["disk"] if d["disk_device"] == dev), {})


def shape(node):
    """The JSON skeleton: keys in order, list lengths, value kinds."""
    if isinstance(node, dict):
        return [(k, shape(v)) for k, v in node.items()]
    if isinstance(node, list):
        return [shape(v) for v in node]
    return "str" if isinstance(node, str) else "num"


def fail(message, passed=0):
    print(f"FAIL: {message}\n{passed} passed, 1 failed")
    return 1


def compare(args, devices, disk, procs):
    """Runs both tools once beside the load and compares their reports; 0 when they agree."""
    env = dict(os.environ, LC_ALL="C")
    # The spelling: options, interval and count, then -o JSON and the devices.
    cmd = ["-x", "-y", "1", str(args.seconds), "-o", "JSON"] + devices
    procs[:] = [subprocess.Popen(argv + cmd, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
                for argv in (["/usr/bin/iostat"], [os.path.abspath(args.iowatch), "iostat"])]
    outs = [p.communicate(timeout=args.seconds + 20)[0] for p in procs]
    try:
        ref, our = json.loads(outs[0]), json.loads(outs[1])
    except ValueError:
        return fail(f"output is not JSON\nsysstat:\n{outs[0]}\niowatch:\n{outs[1]}")
    same = shape(ref) == shape(our)
    print(f"JSON structure: {'same' if same else 'DIFFERENT'}")
    passed, failed = int(same), int(not same)
    ref_stats, our_stats = (doc["sysstat"]["hosts"][0]["statistics"] for doc in (ref, our))
    if len(ref_stats) != args.seconds or len(our_stats) != len(ref_stats):
        return fail(f"report counts: sysstat {len(ref_stats)}, iowatch {len(our_stats)}", passed)
    light = [(i + 1, c, entry(r, disk)[c]) for i, r in enumerate(ref_stats)
             for c in ("r/s", "w/s") if entry(r, disk)[c] <= MIN_IOPS]
    print(f"load on {disk}: {'real' if not light else f'TOO LIGHT {light}'}")
    passed, failed = passed + (not light), failed + bool(light)
    for dev in devices:
        print(f"\n{dev:9}" + "".join(f"{f'#{i + 1} sysstat':>16} /{'iowatch':>9} "
                                      for i in range(len(ref_stats))) + f"{'worst%':>8}")
        for col in COLUMNS:
            cells, worst, bad = "", 0.0, 0
            for r, o in zip(ref_stats, our_stats):
                rv, ov = entry(r, dev)[col], entry(o, dev).get(col, float("nan"))
                ok = abs(ov - rv) <= REL * max(abs(rv), FLOOR)
                worst = max(worst, abs(ov - rv) / abs(rv) * 100 if rv else abs(ov - rv))
                passed, failed, bad = passed + ok, failed + (not ok), bad + (not ok)
                cells += f"{rv:16.2f} /{ov:9.2f}" + ("*" if not ok else " ")
            print(f"{col:9}{cells}{worst:8.2f}" + ("  FAIL" if bad else ""))
    print("(worst% is relative to sysstat, absolute when sysstat is 0; * marks a failed cell)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("iowatch")
    parser.add_argument("--dir", default=os.getcwd())
    parser.add_argument("--seconds", type=int, default=3, help="number of 1 s reports")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # still clean up when terminated
    for tool in ("fio", "iostat"):
        if shutil.which(tool) is None:
            print(f"SKIP: {tool} not installed")
            return 77
    scratch = tempfile.mkdtemp(prefix="iowatch-live-", dir=args.dir)
    fio, procs = None, []
    try:
        devices = block_devices(scratch)
        if devices is None:
            print(f"SKIP: {args.dir} is not on a block device (tmpfs/overlay?)")
            return 77
        disk = devices[0]
        print(f"scratch {scratch} on {' / '.join(devices)}")
        fio_args = ["fio", "--name=load", f"--filename={scratch}/fio.dat", "--size=256M",
                    "--rw=randrw", "--bs=4k", "--iodepth=16", "--ioengine=libaio",
                    "--direct=1", "--thread", "--output-format=terse"]
        # Lay the file out first, so the measured load is only the random I/O.
        lay = subprocess.run(fio_args + ["--create_only=1"], capture_output=True, text=True)
        if lay.returncode != 0:
            return fail(f"fio could not lay out its file:\n{lay.stderr}")
        fio = subprocess.Popen(fio_args + ["--time_based", f"--runtime={2 * args.seconds + 20}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # Ramp up: at least 2 s, and the disk's completed I/Os growing in the last two 0.5 s windows.
        start, steady, last = time.monotonic(), 0, ios_done(disk)
        while time.monotonic() - start < 2.0 or steady < 2:
            time.sleep(0.5)
            now = ios_done(disk)
            steady = steady + 1 if now - last > MIN_IOPS / 2 else 0
            last = now
            if fio.poll() is not None or time.monotonic() - start > 15:
                return fail("fio load did not come up\n" + (fio.stderr.read() if fio.poll() else ""))
        for attempt in (1, 2):
            code = compare(args, devices, disk, procs)
            if code == 0 or attempt == 2:
                return code
            print("\nrepeating once under the same load: a scheduling hiccup can put a burst "
                  "into one tool's window and not the other's; a real difference fails twice\n")
    finally:
        for p in procs + [fio] * (fio is not None):  # fio --thread: no forked job processes
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
