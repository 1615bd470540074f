#!/usr/bin/python3
"""`iowatch probe` where laying out its file goes wrong (root).

probe_vs_fio.py covers tmpfs under direct=1 and a block device without
--allow-block-device; this covers the rest of the fault cases:
  - a missing directory: exit 2 naming it, nothing created;
  - a read-only directory (root ignores permission bits, so a read-only bind
    mount of a temp dir in a private mount namespace, `unshare -m`): exit 2
    naming the path and "Read-only file system", nothing left;
  - a full filesystem (a 16 MiB ext4 image on a loop device, filled to within
    1 MiB by a preallocated file): an 8 MiB probe exits 2 with "no space"
    and the size, removes its half-made file and gives the space back; with
    the filler gone, a direct=1 randwrite of 4 MiB runs and its writes reach
    the loop device;
  - a probe file whose marker (user.iowatch.probe) says "not (fully) filled"
    is refilled by the next run, even a read-only job, and its marker raised.
`finally` unmounts, detaches the loop device, removes the loop node if
losetup added it, and removes the temp files.

Usage: probe_faults.py IOWATCH_BINARY
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import daemon
from serve_hotplug import LOOP_CTL_REMOVE, loop_ctl, loop_nodes

MIB = 1 << 20
MARKER = "user.iowatch.probe"
IMAGE_MIB = 16


def probe(binary, *args, timeout=60, wrap=()):
    return subprocess.run([*wrap, binary, "probe", *args], capture_output=True, text=True,
                          timeout=timeout)


def job(directory, name="x", size="1M", rw="randread", extra=()):
    return [f"--name={name}", f"--directory={directory}", f"--size={size}", f"--rw={rw}",
            "--bs=4k", "--ioengine=psync", "--runtime=1", *extra]


def digest(path, begin=0, end=None):
    with open(path, "rb") as f:
        f.seek(begin)
        return hashlib.sha256(f.read(None if end is None else end - begin)).hexdigest()


def timed(r, what, fn, *args):
    """Runs one group of checks; an unexpected error is a failed check, and the next group runs."""
    started = time.monotonic()
    try:
        fn(r, *args)
    except Exception:  # noqa: BLE001 - reported as a failed check
        r.check(False, f"{what}: no unexpected error", traceback.format_exc())
    print(f"     ({what}: {time.monotonic() - started:.1f} s)", flush=True)


def check_missing_directory(r, binary, workdir):
    top = os.path.join("/var/tmp", f"iowatch-missing-{os.getpid()}-{os.path.basename(workdir)}")
    missing = os.path.join(top, "d")
    if not r.check(not os.path.exists(top), "missing directory: the path really is missing", top):
        return
    run = probe(binary, *job(missing))
    r.check(run.returncode == 2 and missing in run.stderr,
            "missing directory: exit 2, the message names the directory",
            f"exit {run.returncode}: {run.stderr.strip()}")
    r.check(not os.path.exists(top), "missing directory: nothing created", top)


def check_read_only_directory(r, binary, workdir):
    ro = tempfile.mkdtemp(prefix="ro-", dir=workdir)
    # Root ignores permission bits: make the directory a read-only bind mount in
    # a private mount namespace that dies with the command.
    wrap = ["unshare", "-m", "sh", "-c",
            'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"', ro]
    run = probe(binary, *job(ro), wrap=wrap)
    r.check(run.returncode == 2 and ro in run.stderr and "Read-only file system" in run.stderr,
            "read-only directory: exit 2, the message names the path and says "
            "'Read-only file system'", f"exit {run.returncode}: {run.stderr.strip()}")
    r.check(not os.listdir(ro), "read-only directory: nothing left", str(os.listdir(ro)))
    # The same job where the directory is writable: the failure was the mount's.
    run = probe(binary, *job(ro))
    r.check(run.returncode == 0, "the same job in the directory when writable runs",
            f"exit {run.returncode}: {run.stderr.strip()}")


def free_bytes(path):
    s = os.statvfs(path)
    return s.f_bfree * s.f_frsize  # root may use every free block (the image has no reserve)


def loop_sectors_written(dev):
    with open(f"/sys/block/{os.path.basename(dev)}/stat") as f:
        return int(f.read().split()[6])


def check_full_filesystem(r, binary, workdir, state):
    image = os.path.join(workdir, "ext4.img")
    with open(image, "wb") as f:
        f.truncate(IMAGE_MIB * MIB)
    # -m 0: no root reserve, so "free" means the same to statvfs and to root.
    subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", image], check=True, capture_output=True,
                   timeout=60)
    nodes_before = loop_nodes()
    dev = subprocess.run(["losetup", "--find", "--show", image], capture_output=True, text=True,
                         check=True, timeout=30).stdout.strip()
    state["dev"] = dev
    state["new_node"] = int(dev[len("/dev/loop"):]) not in nodes_before
    mnt = os.path.join(workdir, "mnt")
    os.mkdir(mnt)
    subprocess.run(["mount", "-t", "ext4", dev, mnt], check=True, capture_output=True, timeout=30)
    state["mnt"] = mnt

    filler = os.path.join(mnt, "filler")
    left = MIB
    subprocess.run(["fallocate", "-l", str(free_bytes(mnt) - left), filler], check=True,
                   capture_output=True, timeout=30)
    free = free_bytes(mnt)
    print(f"     {dev} on {mnt}: {free} bytes free after the filler", flush=True)
    r.check(0 < free < 8 * MIB, "full filesystem: less than 8 MiB left", f"free={free}")
    run = probe(binary, *job(mnt, size="8M"))
    err = run.stderr.strip()
    r.check(run.returncode == 2, "full filesystem: an 8 MiB probe exits 2",
            f"exit {run.returncode}: {err}")
    r.check("no space" in err.lower() and ("8388608" in err or "8M" in err or "8 MiB" in err)
            and mnt in err, "full filesystem: the message says no space, names the directory "
            "and the size", err)
    left_over = sorted(set(os.listdir(mnt)) - {"lost+found"})
    r.check(left_over == ["filler"], "full filesystem: the half-made probe file is removed",
            str(left_over))
    after = free_bytes(mnt)
    r.check(abs(after - free) <= 64 * 1024, "full filesystem: the preallocated space is given back",
            f"free before {free}, after {after}")

    os.unlink(filler)
    sectors = loop_sectors_written(dev)
    run = probe(binary, *job(mnt, name="w", size="4M", rw="randwrite",
                             extra=("--direct=1", "--time_based", "--output-format=json")))
    written = (loop_sectors_written(dev) - sectors) * 512
    try:
        data = json.loads(run.stdout)
    except json.JSONDecodeError:
        data = None
    ok = r.check(run.returncode == 0 and data is not None,
                 "ext4 on loop: direct=1 randwrite of 4 MiB runs, JSON parses",
                 f"exit {run.returncode}: {run.stderr.strip()[:1500]} {run.stdout[:300]}")
    if ok:
        w = data["jobs"][0]["write"]
        r.check(w["total_ios"] > 0, "ext4 on loop: writes done", f"total_ios={w['total_ios']}")
        r.check(written >= w["io_bytes"] > 0, "ext4 on loop: the writes reached the loop device",
                f"io_bytes={w['io_bytes']}, {os.path.basename(dev)} wrote {written} bytes")
        print(f"     ext4 on loop: {w['total_ios']} writes, {w['iops']:.0f} IOPS; "
              f"{os.path.basename(dev)} wrote {written} bytes", flush=True)


def check_marker_refill(r, binary, workdir):
    directory = tempfile.mkdtemp(prefix="marker-", dir=workdir)
    size = MIB
    run = probe(binary, *job(directory))
    if not r.check(run.returncode == 0, "marker: a first run creates the probe file",
                   f"exit {run.returncode}: {run.stderr.strip()}"):
        return
    names = os.listdir(directory)
    if not r.check(len(names) == 1, "marker: one probe file", str(names)):
        return
    path = os.path.join(directory, names[0])
    r.check(os.getxattr(path, MARKER) == str(size).encode(),
            f"marker: {MARKER} is the size ({size})", repr(os.getxattr(path, MARKER)))

    for value, what, keep in ((b"0", "not filled", 0), (b"junk", "unreadable", 0),
                              (str(size // 2).encode(), "half filled", size // 2)):
        before_head, before_tail = digest(path, 0, keep), digest(path, keep)
        os.setxattr(path, MARKER, value)
        run = probe(binary, *job(directory, rw="read"))
        marker = os.getxattr(path, MARKER)
        r.check(run.returncode == 0 and marker == str(size).encode(),
                f"marker {value.decode()!r} ({what}): a read job refills, the marker is the size "
                "again", f"exit {run.returncode}: {run.stderr.strip()}; marker {marker!r}")
        r.check(digest(path, keep) != before_tail,
                f"marker {value.decode()!r} ({what}): [{keep}, {size}) rewritten")
        if keep:
            r.check(digest(path, 0, keep) == before_head,
                    f"marker {value.decode()!r} ({what}): [0, {keep}) left as it was")
        r.check(os.path.getsize(path) == size and os.listdir(directory) == names,
                f"marker {value.decode()!r} ({what}): same file, same size",
                f"{os.listdir(directory)} {os.path.getsize(path)}")


def cleanup_loop(state):
    mnt, dev = state.get("mnt"), state.get("dev")
    if mnt:
        if subprocess.run(["umount", mnt], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", mnt], check=False)
    if dev:
        subprocess.run(["losetup", "-d", dev], check=False)
        number = int(dev[len("/dev/loop"):])
        # Only the node losetup added for us: another test may be adding its own.
        if state.get("new_node") and os.path.exists(f"/sys/block/loop{number}"):
            try:
                loop_ctl(LOOP_CTL_REMOVE, number)
            except OSError as e:
                print(f"cleanup: loop{number}: {e}")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    binary = os.path.abspath(sys.argv[1])
    daemon.require_root("this test (bind mounts, a loop device)")
    daemon.exit_on_sigterm()
    missing = [t for t in ("losetup", "mkfs.ext4", "unshare", "mount", "fallocate")
               if shutil.which(t) is None]
    if missing or not os.path.exists("/dev/loop-control"):
        print(f"SKIP: needs {', '.join(missing) or '/dev/loop-control'}")
        return 77
    r = daemon.Results()
    workdir = tempfile.mkdtemp(prefix="iowatch-faults-", dir="/var/tmp")
    state = {}
    try:
        timed(r, "missing directory", check_missing_directory, binary, workdir)
        timed(r, "read-only directory", check_read_only_directory, binary, workdir)
        timed(r, "full filesystem", check_full_filesystem, binary, workdir, state)
        timed(r, "marker refill", check_marker_refill, binary, workdir)
    finally:
        cleanup_loop(state)
        shutil.rmtree(workdir, ignore_errors=True)
    mounted = state.get("mnt") and any(line.split()[1] == state["mnt"]
                                       for line in open("/proc/mounts"))
    dev = state.get("dev")
    attached = dev and os.path.exists(f"/sys/block/{os.path.basename(dev)}/loop/backing_file")
    node_left = dev and state.get("new_node") and os.path.exists(f"/sys/block/{os.path.basename(dev)}")
    r.check(not mounted and not attached and not node_left and not os.path.exists(workdir),
            "cleaned up: unmounted, loop device detached (its node removed if added), temp dir "
            "removed", f"mounted={mounted} attached={attached} node left={node_left}")
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
