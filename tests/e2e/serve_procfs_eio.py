#!/usr/bin/python3
"""/proc/diskstats answers EIO under a running daemon, then recovers (root).

A real EIO from a read(2) of a procfs file, which the kernel's own procfs
never gives on demand: the injected procfs root (--path.procfs) is a copy of
the real-vm fixture's /proc on ext4 on a direct-I/O loop device. Once the
daemon samples it, the loop's backing file is truncated at diskstats' first
block and the file's cached pages are dropped (posix_fadvise DONTNEED): the
next read fails in the block layer with EIO. Checked:
1. during the fault: iowatch_collector_success{collector="diskstats"} is 0,
   the cause is logged once (not every sample) with the path and
   "Input/output error", the other sources whose blocks are still readable
   are sampled, /metrics and /healthz answer, the daemon is alive;
2. diskstats rewritten (the device whole again): success is 1 again without
   a restart, and the log says so once; SIGTERM exits 0.
Everything is unmounted, detached and removed at the end.

Usage: serve_procfs_eio.py IOWATCH_BINARY
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import daemon
from serve_device_eio import first_data_byte

IMAGE_BYTES = 16 << 20
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "real-vm")


def success(samples, collector):
    return daemon.values(samples, "iowatch_collector_success", collector=collector)


def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def readable(path):
    try:
        with open(path, "rb") as f:
            f.read()
        return True
    except OSError:
        return False


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    daemon.require_root("a loop device and a mount")
    daemon.own_mount_namespace()
    work = tempfile.mkdtemp(prefix="iowatch-e2e-procfs-eio-", dir="/var/tmp")
    d = None
    r = daemon.Results()
    try:
        with daemon.Ext4OnLoop(os.path.join(work, "proc.img"), os.path.join(work, "mnt"),
                               IMAGE_BYTES, direct_io=True) as disk:
            try:  # the daemon goes before its disk is unmounted
                proc = os.path.join(disk.mnt, "proc")
                shutil.copytree(os.path.join(FIXTURE, "proc"), proc)
                diskstats = os.path.join(proc, "diskstats")
                with open(diskstats, "rb") as f:
                    original = f.read()
                os.sync()
                d = daemon.Daemon(sys.argv[1], config="sampling:\n  interval: 200ms\n",
                                  procfs=proc, sysfs=os.path.join(FIXTURE, "sys"))
                d.start()
                ok, _ = d.scrape_until(lambda s: success(s, "diskstats") == [1], 10)
                r.check(ok, "diskstats sampled before the fault", d.stderr()[-2000:])

                cut = first_data_byte(diskstats)
                os.truncate(disk.image, cut)
                drop_cache(diskstats)
                r.check(not readable(diskstats), f"diskstats (block at byte {cut}) now fails to read")
                ok, samples = d.scrape_until(lambda s: success(s, "diskstats") == [0], 10)
                r.check(ok, "EIO: iowatch_collector_success{collector=diskstats} is 0", d.stderr()[-3000:])
                time.sleep(1)  # five more samples: still one log line
                logged = [l for l in d.stderr().splitlines() if "Input/output error" in l]
                r.check(len(logged) == 1 and diskstats in logged[0],
                        "EIO: logged once, with the path and the errno text", "\n".join(logged[:5]))
                expected = {}
                for name in ("meminfo", "stat", "vmstat"):
                    path = os.path.join(proc, name)
                    drop_cache(path)
                    expected[name] = [1] if readable(path) else [0]
                time.sleep(1)
                samples = d.scrape()
                for name, want in expected.items():
                    r.check(success(samples, name) == want,
                            f"EIO: {name} ({'readable' if want == [1] else 'also past the cut'}) "
                            f"success {success(samples, name)}")
                r.check(d.alive() and d.get("/healthz")[0] in (200, 503),
                        f"EIO: the daemon answers /healthz ({d.get('/healthz')[0]})")

                os.truncate(disk.image, IMAGE_BYTES)
                with open(diskstats + ".new", "wb") as f:
                    f.write(original)
                os.replace(diskstats + ".new", diskstats)
                ok, _ = d.scrape_until(lambda s: success(s, "diskstats") == [1], 10)
                r.check(ok, "recovered: diskstats sampled again without a restart", d.stderr()[-2000:])
                code, seconds = d.stop()
                r.check(code == 0, f"SIGTERM: exit {code} in {seconds:.1f} s", d.stderr()[-2000:])
                print("     log:\n       " + "\n       ".join(
                    l for l in d.stderr().splitlines() if "diskstats" in l))
            finally:
                if d is not None:
                    d.close()
    finally:
        subprocess.run(["rm", "-rf", work], check=False)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
