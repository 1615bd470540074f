#!/usr/bin/python3
"""The filesystem collector on mount trees that hide, stack and misname mounts (root).

In a private mount namespace, under a temporary directory, `iowatch serve` samples every
second with its mount points included. Checked:
- a tmpfs on data/x, then a tmpfs on data (which holds a directory x of its own): data/x is
  hidden (device_error 1, no usage), never the covering tmpfs's figures under its labels;
- the same after `mount --move` of a parent with a child (mountinfo's order is not
  parent-first then): a mount stacked on the moved parent hides the child;
- two tmpfs stacked on one mount point: one series, the top one's figures;
- mount points that differ only in bytes that are not UTF-8 (x\\xff, x\\xfe): two series, and
  no label set twice in the whole scrape; promtool finds nothing;
- ten FUSE mounts whose statfs never answers, then a tmpfs: the tmpfs has its usage (the
  FUSE calls fill their own pool of 8);
- btrfs mounted through a device node named otherwise than its loop device (as
  /dev/mapper/NAME names dm-N): its per-device error counters.

Usage: serve_mount_tree.py IOWATCH_BINARY
"""
import collections
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import traceback

import daemon
from stuck_fuse import StuckFuse

FUSE_MOUNTS = 10
NODE = "/dev/shm/vg-data"


def mount_tmpfs(path, size_kib, make=True):
    if make:
        os.makedirs(path, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", path], check=True)


def series(samples, name, mountpoint):
    return daemon.values(samples, name, mountpoint=mountpoint)


def check_hidden_under_parent(r, samples, mnt):
    x = f"{mnt}/data/x"
    got = (series(samples, "iowatch_filesystem_device_error", x),
           series(samples, "iowatch_filesystem_size_bytes", x))
    r.check(got == ([1], []), "a mount under an over-mounted parent directory is hidden",
            f"device_error, size_bytes of {x}: {got}")
    cover = series(samples, "iowatch_filesystem_size_bytes", f"{mnt}/data")
    r.check(cover == [3072 << 10], f"the tmpfs over it reads its own size ({cover})")


def check_moved(r, samples, mnt):
    child = f"{mnt}/moved/child"
    got = series(samples, "iowatch_filesystem_device_error", child)
    r.check(got == [1], "after mount --move, a child of a covered mount is hidden",
            f"device_error of {child}: {got}")


def check_stacked(r, samples, mnt):
    got = series(samples, "iowatch_filesystem_size_bytes", f"{mnt}/stack")
    r.check(got == [2048 << 10], "two tmpfs stacked on one point: one series, the top one's",
            f"size_bytes {got}")


def check_unique(r, text, samples, mnt):
    counts = collections.Counter((n, tuple(sorted(l.items()))) for n, l, _ in samples)
    twice = [key for key, count in counts.items() if count > 1]
    r.check(not twice, "no label set appears twice in the scrape", str(twice[:3]))
    odd = sorted(l["mountpoint"] for n, l, _ in samples
                 if n == "iowatch_filesystem_info" and l["mountpoint"].startswith(f"{mnt}/odd"))
    r.check(len(odd) == 2 and odd[0] != odd[1],
            "mount points differing in invalid UTF-8 bytes are two series", str(odd))
    ok, output = daemon.promtool_check(text)
    r.check(ok, "promtool check metrics is clean", output)


def check_fuse_pool(r, samples, mnt):
    late = series(samples, "iowatch_filesystem_size_bytes", f"{mnt}/late")
    stuck = daemon.values(samples, "iowatch_filesystem_stuck_mounts")
    r.check(late == [1024 << 10] and stuck == [8],
            f"past 8 stuck FUSE mounts a tmpfs mounted after them is read (size {late}, "
            f"stuck {stuck})")


def check_btrfs_via_node(r, samples, mnt, source):
    got = sorted(l["type"] for n, l, _ in samples
                 if n == "iowatch_filesystem_btrfs_device_errors_total" and
                 l.get("mountpoint") == f"{mnt}/btrfs")
    r.check(got == sorted(["write", "read", "flush", "corruption", "generation"]),
            f"btrfs mounted through a node of another name (source {source}): its device's error counters",
            str(got))


def make_btrfs_via_node(work, mnt, cleanup):
    """btrfs on a loop device, mounted through a device node of another name, as
    /dev/mapper/NAME is the node of dm-N (this kernel resolves links, so a link would not
    do): the node is in a tmpfs over /dev/shm, which only this mount namespace sees. Its path,
    not the kernel's name, is the mount's source; /sys/fs/btrfs lists loopN."""
    image = f"{work}/btrfs.img"
    with open(image, "wb") as f:
        f.truncate(256 << 20)
    subprocess.run(["mkfs.btrfs", "-q", image], check=True, capture_output=True)
    os.sync()
    loop = subprocess.run(["losetup", "-f", "--show", image], check=True, capture_output=True,
                          text=True).stdout.strip()
    cleanup.append(["losetup", "-d", loop])
    subprocess.run(["mount", "-t", "tmpfs", "-o", "dev", "tmpfs", "/dev/shm"], check=True)
    cleanup.append(["umount", "-l", "/dev/shm"])
    os.mknod(NODE, 0o600 | stat.S_IFBLK, os.stat(loop).st_rdev)
    os.makedirs(f"{mnt}/btrfs")
    subprocess.run(["mount", "-t", "btrfs", NODE, f"{mnt}/btrfs"], check=True)
    cleanup.append(["umount", "-l", f"{mnt}/btrfs"])
    with open("/proc/self/mountinfo", errors="replace") as f:
        source = [line.split(" - ")[1].split()[1] for line in f if f" {mnt}/btrfs " in line]
    return source


def main():
    daemon.require_root("mounts and loop devices")
    daemon.own_mount_namespace()
    daemon.exit_on_sigterm()
    if daemon.missing_tools("mkfs.btrfs", "losetup", "promtool"):
        return 1
    binary = sys.argv[1]
    r = daemon.Results()
    work = tempfile.mkdtemp(prefix="iowatchtree")
    mnt = f"{work}/mnt"
    fuses, cleanup = [], []
    try:
        os.makedirs(mnt)
        # Everything below is unmounted with this one tmpfs (lazily) at the end.
        mount_tmpfs(mnt, 1024)
        mount_tmpfs(f"{mnt}/data/x", 1024)
        mount_tmpfs(f"{mnt}/data", 3072)
        os.makedirs(f"{mnt}/data/x")  # in the covering tmpfs: a statfs of data/x answers
        mount_tmpfs(f"{mnt}/parent", 1024)
        mount_tmpfs(f"{mnt}/parent/child", 1024)
        os.makedirs(f"{mnt}/moved")
        subprocess.run(["mount", "--move", f"{mnt}/parent", f"{mnt}/moved"], check=True)
        mount_tmpfs(f"{mnt}/moved", 1024, make=False)  # stacked on the moved parent
        os.makedirs(f"{mnt}/moved/child")
        mount_tmpfs(f"{mnt}/stack", 1024)
        mount_tmpfs(f"{mnt}/stack", 2048, make=False)
        os.makedirs(f"{mnt}/odd".encode() + b"/x\xff")
        os.makedirs(f"{mnt}/odd".encode() + b"/x\xfe")
        for name in (b"x\xff", b"x\xfe"):
            subprocess.run([b"mount", b"-t", b"tmpfs", b"tmpfs", f"{mnt}/odd/".encode() + name],
                           check=True)
        for i in range(FUSE_MOUNTS):
            fuses.append(StuckFuse(f"{mnt}/fuse{i}", ["file"], stuck_statfs=True))
        mount_tmpfs(f"{mnt}/late", 1024)
        source = make_btrfs_via_node(work, mnt, cleanup)
        config = ("probes:\n  enabled: false\nsampling:\n  interval: 1s\ncollectors:\n"
                  "  filesystem:\n    mount_timeout: 100ms\n"
                  # \C: any byte (RE2's . is a UTF-8 character: x\xff would not match it)
                  f"    mount_points_include: '^{mnt}(/\\C*)?$'\n")
        with daemon.Daemon(binary, config=config) as d:
            held, samples = d.scrape_until(
                lambda s: daemon.values(s, "iowatch_filesystem_stuck_mounts") == [8], 20)
            r.check(held, "eight FUSE mounts stuck")
            d.scrape_after_next_sample()
            status, _, body = d.get("/metrics")
            text = body.decode()
            samples = daemon.parse_metrics(text)
            check_hidden_under_parent(r, samples, mnt)
            check_moved(r, samples, mnt)
            check_stacked(r, samples, mnt)
            check_fuse_pool(r, samples, mnt)
            check_btrfs_via_node(r, samples, mnt, source)
            check_unique(r, text, samples, mnt)
    except Exception:
        traceback.print_exc()
        r.check(False, "the test ran to its end")
    finally:
        for fuse in fuses:
            fuse.close()
        for command in reversed(cleanup):
            subprocess.run(command, check=False, capture_output=True)
        subprocess.run(["umount", "-l", mnt], check=False, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
