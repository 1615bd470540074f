#!/usr/bin/python3
"""The filesystem collector on real filesystems, against statvfs, exactly (root).

Three loop devices carry ext4, XFS and btrfs, mounted under a temporary directory, with a bind
mount of an ext4 subdirectory beside them and a FUSE file system whose statfs never answers (a
stale NFS server as df meets it). `iowatch serve` samples every second, its mount points
included by collectors.filesystem.mount_points_include. Checked:
- each filesystem's size, free, avail, files and files_free equal os.statvfs's (f_blocks,
  f_bfree, f_bavail x f_frsize; f_files, f_ffree) to the byte, before and after 8 MiB are
  written to it; its device, fstype and the loop device's major:minor and name (disk);
- the bind mount adds no series: one per filesystem;
- a tmpfs mounted while serving gets its series within 5 s, and loses them once unmounted
  (the table is read again only when the kernel says it changed);
- readonly goes 0 -> 1 on `mount -o remount,ro` (XFS), and on ext4's own error path: mounted
  errors=remount-ro, /sys/fs/ext4/<dev>/trigger_fs_error makes a real error and the kernel
  remounts it read-only; iowatch_filesystem_errors_total and the last error's time go from
  0 to the kernel's own errors_count and last_error_time;
- btrfs's per-device error counters are error_stats', type by type;
- XFS shut down (`xfs_io -x -c shutdown`): iowatch_kernel_filesystem_shutdowns_total counts the
  kernel log's line for its device, while statfs still answers (device_error 0);
- the hung mount: device_error 1 and iowatch_filesystem_stuck_mounts 1, one statfs request in
  all however many samples pass, samples still every second and scrapes fast; a daemon stuck
  on it exits on SIGTERM at once (exit 0: the call waits in a helper process); once the FUSE
  server goes, its series go and stuck_mounts returns to 0.

Usage: serve_filesystems.py IOWATCH_BINARY
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import daemon
from stuck_fuse import StuckFuse

FILESYSTEMS = {  # name: (mkfs argv, image size, mount options)
    "ext4": (["mkfs.ext4", "-q"], 64 << 20, "errors=remount-ro"),
    "xfs": (["mkfs.xfs", "-q"], 320 << 20, None),
    "btrfs": (["mkfs.btrfs", "-q"], 256 << 20, None),
}
FIELDS = ("size_bytes", "free_bytes", "avail_bytes", "files", "files_free")


def expected(mnt):
    s = os.statvfs(mnt)
    return {"size_bytes": s.f_blocks * s.f_frsize, "free_bytes": s.f_bfree * s.f_frsize,
            "avail_bytes": s.f_bavail * s.f_frsize, "files": s.f_files, "files_free": s.f_ffree}


def exported(samples, mnt):
    out = {}
    for field in FIELDS:
        v = daemon.values(samples, f"iowatch_filesystem_{field}", mountpoint=mnt)
        out[field] = int(v[0]) if len(v) == 1 else v
    return out


def agrees(d, mnt, tries=5):
    """(held, exported, statvfs): a sample taken between two equal statvfs readings agrees."""
    got = want = None
    for _ in range(tries):
        before = expected(mnt)
        samples = d.scrape_after_next_sample()
        want, got = expected(mnt), exported(samples, mnt)
        if before == want and got == want:
            return True, got, want
    return False, got, want


def check_exact(r, d, mounts, when):
    for name, fs in mounts.items():
        held, got, want = agrees(d, fs.mnt)
        r.check(held, f"{name} {when}: size, free, avail, files and files_free are statvfs's",
                f"iowatch {got}, statvfs {want}")


def check_identity(r, samples, mounts):
    for name, fs in mounts.items():
        info = [l for n, l, _ in samples if n == "iowatch_filesystem_info" and
                l.get("mountpoint") == fs.mnt]
        rdev = os.stat(fs.loop).st_rdev
        want = {"device": fs.loop, "fstype": name, "disk": os.path.basename(fs.loop),
                "major": str(os.major(rdev)), "minor": str(os.minor(rdev))}
        got = {k: info[0].get(k) for k in want} if len(info) == 1 else info
        # btrfs mounts show an anonymous device number, not the loop device's.
        if name == "btrfs":
            want.pop("major"), want.pop("minor"), want.pop("disk")
            got = {k: v for k, v in got.items() if k in want} if isinstance(got, dict) else got
        r.check(got == want, f"{name}: device, fstype and device number as the kernel has them",
                f"{got} != {want}")


def wait_readonly(d, mnt, value, seconds=5):
    held, samples = d.scrape_until(
        lambda s: daemon.values(s, "iowatch_filesystem_readonly", mountpoint=mnt) == [value],
        seconds)
    return held, daemon.values(samples, "iowatch_filesystem_readonly", mountpoint=mnt)


def asked_by(fuse, pid):
    return sum(1 for process, parent in fuse.statfs_callers if pid in (process, parent))


def check_xfs_shutdown(r, d, xfs):
    """XFS shut down (xfs_io -x -c shutdown): statfs still answers and the mount still reads
    as before, and the kernel log's line is counted for its device."""
    device = os.path.basename(xfs.loop)

    def shutdowns(samples):
        return sum(daemon.values(samples, "iowatch_kernel_filesystem_shutdowns_total",
                                 device=device, fstype="xfs"))
    before = shutdowns(d.scrape())  # since boot: an earlier test may have shut one down
    subprocess.run(["xfs_io", "-x", "-c", "shutdown", xfs.mnt], check=True, capture_output=True)
    held, samples = d.scrape_until(lambda s: shutdowns(s) == before + 1, 10)
    errors = daemon.values(samples, "iowatch_filesystem_device_error", mountpoint=xfs.mnt)
    r.check(held and errors == [0],
            f"XFS shut down: counted from the kernel log on {device} ({before} -> "
            f"{shutdowns(samples)}), while statfs still answers (device_error {errors})")


def check_exit_beside_hung_mount(r, binary, config, fuse):
    """A daemon whose statfs of the hung mount never returns still exits on SIGTERM, at once:
    the call waits in a helper process, not in one of its threads (a thread in FUSE's
    uninterruptible wait would keep the whole process, its port bound, until the server
    answered)."""
    with daemon.Daemon(binary, config=config) as d:
        held, _ = d.scrape_until(
            lambda s: daemon.values(s, "iowatch_filesystem_stuck_mounts") == [1], 10)
        r.check(held and asked_by(fuse, d.proc.pid) == 1,
                "a second daemon's statfs of the hung mount is stuck too")
        code, seconds = d.stop()
        r.check(code == 0 and seconds < 5,
                f"SIGTERM beside the stuck statfs: exit {code} in {seconds:.1f} s")


def check_hung_mount(r, d, fuse, stuck):
    held, samples = d.scrape_until(
        lambda s: daemon.values(s, "iowatch_filesystem_stuck_mounts") == [1], 10)
    r.check(held and daemon.values(samples, "iowatch_filesystem_device_error",
                                   mountpoint=stuck) == [1],
            "the hung mount: device_error 1, one stuck mount",
            str([x for x in samples if "filesystem" in x[0] and x[1].get("mountpoint") == stuck]))
    stamps, worst = set(), 0.0
    for _ in range(8):
        start = time.monotonic()
        samples = d.scrape()
        worst = max(worst, time.monotonic() - start)
        stamps.update(daemon.values(samples, "iowatch_sample_timestamp_seconds"))
        time.sleep(0.5)
    r.check(len(stamps) >= 3, f"samples keep coming beside it ({len(stamps)} in 4 s)")
    r.check(worst < 1.0, f"scrapes stay fast ({worst * 1000:.0f} ms at worst)")
    # Other tests' daemons running beside this one may ask the mount too: only ours counts,
    # itself or its statfs helpers (its children).
    ours = asked_by(fuse, d.proc.pid)
    r.check(ours == 1, f"one statfs in all from the daemon, not one per sample ({ours}; "
            f"{fuse.statfs_calls} from every process)")
    success = daemon.values(samples, "iowatch_collector_success", collector="filesystem")
    r.check(success == [1], f"the collector itself succeeds ({success})")


def read_number(path):
    with open(path) as f:
        return int(f.read())


def check_ext4_errors(r, d, ext4, sysfs):
    want = [read_number(f"{sysfs}/errors_count"), read_number(f"{sysfs}/last_error_time")]
    held, samples = d.scrape_until(
        lambda s: daemon.values(s, "iowatch_filesystem_errors_total", mountpoint=ext4.mnt)
        == [want[0]], 5)
    got = [daemon.values(samples, "iowatch_filesystem_errors_total", mountpoint=ext4.mnt),
           daemon.values(samples, "iowatch_filesystem_last_error_time_seconds",
                         mountpoint=ext4.mnt)]
    r.check(held and want[0] >= 1 and got == [[want[0]], [want[1]]],
            f"ext4's error count and last error time are the kernel's ({got}, sysfs {want})")


def check_btrfs_errors(r, samples, btrfs):
    member = os.path.basename(btrfs.loop)
    fsids = [f for f in os.listdir("/sys/fs/btrfs")
             if os.path.exists(f"/sys/fs/btrfs/{f}/devices/{member}")]
    want = {}
    for fsid in fsids:
        for devid in os.listdir(f"/sys/fs/btrfs/{fsid}/devinfo"):
            with open(f"/sys/fs/btrfs/{fsid}/devinfo/{devid}/error_stats") as f:
                for line in f:
                    name, value = line.split()
                    want[(devid, name.removesuffix("_errs"))] = int(value)
    got = {(l["devid"], l["type"]): int(v) for n, l, v in samples
           if n == "iowatch_filesystem_btrfs_device_errors_total" and
           l.get("mountpoint") == btrfs.mnt}
    r.check(len(fsids) == 1 and got == want and len(got) == 5,
            f"btrfs's error counters are error_stats', type by type ({len(got)} series)",
            f"{got} != {want}")


def check_mounted_while_serving(r, d, added):
    """The mount table is read again when the kernel says it changed: a tmpfs mounted while
    the daemon serves gets its series within a few samples, and loses them once unmounted."""
    os.makedirs(added)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", added], check=True)
    try:
        held, _ = d.scrape_until(lambda s: daemon.values(
            s, "iowatch_filesystem_size_bytes", mountpoint=added) == [1 << 20], 5)
        r.check(held, "a tmpfs mounted while serving: its 1 MiB within 5 s")
    finally:
        subprocess.run(["umount", added], check=True)
    held, _ = d.scrape_until(lambda s: not daemon.values(
        s, "iowatch_filesystem_info", mountpoint=added), 5)
    r.check(held, "unmounted while serving: its series gone within 5 s")


def main():
    daemon.require_root("loop devices and mounts")
    # A statfs that never answers must not reach the daemons other tests run meanwhile (a
    # thread stuck in FUSE keeps a process from exiting until the mount answers).
    daemon.own_mount_namespace()
    daemon.exit_on_sigterm()
    if daemon.missing_tools("mkfs.xfs", "mkfs.btrfs", "losetup"):
        return 1
    binary = sys.argv[1]
    r = daemon.Results()
    work = tempfile.mkdtemp(prefix="iowatchfs")
    mounts, fuse, bind = {}, None, None
    try:
        for name, (mkfs, size, options) in FILESYSTEMS.items():
            fs = daemon.Ext4OnLoop(f"{work}/{name}.img", f"{work}/mnt/{name}", size, mkfs=mkfs,
                                   options=options)
            mounts[name] = fs.__enter__()
        os.makedirs(f"{mounts['ext4'].mnt}/sub")
        bind = f"{work}/mnt/bind"
        os.makedirs(bind)
        subprocess.run(["mount", "--bind", f"{mounts['ext4'].mnt}/sub", bind], check=True)
        stuck = f"{work}/mnt/stuck"
        fuse = StuckFuse(stuck, ["file"], stuck_statfs=True)
        config = ("probes:\n  enabled: false\nsampling:\n  interval: 1s\ncollectors:\n"
                  f"  filesystem:\n    mount_points_include: \"^{work}/mnt/.*$\"\n")
        with daemon.Daemon(binary, config=config) as d:
            check_hung_mount(r, d, fuse, stuck)
            samples = d.scrape()
            check_identity(r, samples, mounts)
            points = sorted(l["mountpoint"] for n, l, _ in samples if n == "iowatch_filesystem_info")
            want = sorted([fs.mnt for fs in mounts.values()] + [stuck])
            r.check(points == want, "one series per filesystem: the bind mount adds none",
                    f"{points} != {want}")
            check_exact(r, d, mounts, "as made")
            for fs in mounts.values():
                with open(f"{fs.mnt}/data", "wb") as f:
                    f.write(os.urandom(8 << 20))
                    os.fsync(f.fileno())
            subprocess.run(["sync"], check=True)
            check_exact(r, d, mounts, "after 8 MiB written")

            xfs = mounts["xfs"].mnt
            r.check(wait_readonly(d, xfs, 0)[0], "XFS mounted read-write reads readonly 0")
            subprocess.run(["mount", "-o", "remount,ro", xfs], check=True)
            held, got = wait_readonly(d, xfs, 1)
            r.check(held, f"XFS remounted read-only reads readonly 1 ({got})")
            check_mounted_while_serving(r, d, f"{work}/mnt/added")
            check_btrfs_errors(r, d.scrape(), mounts["btrfs"])
            ext4 = mounts["ext4"]
            ext4_sysfs = f"/sys/fs/ext4/{os.path.basename(ext4.loop)}"
            errors = daemon.values(d.scrape(), "iowatch_filesystem_errors_total",
                                   mountpoint=ext4.mnt)
            r.check(errors == [0], f"a new ext4 has recorded no error ({errors})")
            with open(f"{ext4_sysfs}/trigger_fs_error", "w") as f:
                f.write("iowatch test error\n")
            held, got = wait_readonly(d, ext4.mnt, 1)
            r.check(held, f"ext4 after a real error (errors=remount-ro) reads readonly 1 ({got})")
            check_ext4_errors(r, d, ext4, ext4_sysfs)
            check_xfs_shutdown(r, d, mounts["xfs"])
            check_exit_beside_hung_mount(r, binary, config, fuse)

            fuse.close()
            held, samples = d.scrape_until(
                lambda s: daemon.values(s, "iowatch_filesystem_stuck_mounts") == [0] and not
                daemon.values(s, "iowatch_filesystem_device_error", mountpoint=stuck), 10)
            r.check(held, "the FUSE server gone: its series go, no mount stuck")
    except Exception:
        traceback.print_exc()
        r.check(False, "the test ran to its end")
    finally:
        if fuse:
            fuse.close()
        if bind:
            subprocess.run(["umount", "-l", bind], check=False)
        for fs in mounts.values():
            fs.__exit__(None, None, None)
        shutil.rmtree(work, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
