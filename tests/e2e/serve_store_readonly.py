#!/usr/bin/python3
"""The state directory's filesystem goes read-only under a running daemon (root).

The state directory is a 32 MiB ext4 image on a loop device mounted with
errors=remount-ro; the probe file lives under /var/tmp. After a few stored
runs, ext4's own fault switch (/sys/fs/ext4/<dev>/trigger_fs_error) turns the
filesystem read-only, as a disk error would. Checked:
1. while read-only: probes still run, iowatch_probe_store_up is 0, errors are
   counted per run and logged once with the path, the iostat series are
   served, /healthz answers;
2. SIGTERM: exit 0 within 5 s despite the unwritable store;
3. read-write again (unmount, e2fsck, mount: the kernel keeps an ext4 that
   failed read-only until then) and a new daemon on it: every run stored
   before the fault is there, integrity_check is ok, and new runs are stored.
Everything is unmounted, detached and removed at the end.

Usage: serve_store_readonly.py IOWATCH_BINARY
"""
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

import daemon

JOB = "e2e-readonly"


def config(probe_dir):
    return daemon.one_probe_config(JOB, directory=probe_dir, runtime="200ms")


def ok_runs(samples):
    return daemon.completed_runs(samples, JOB)


def stored(state):
    con = sqlite3.connect(f"file:{state}/iowatch.db?mode=ro", uri=True, timeout=10)
    try:
        return (con.execute("PRAGMA integrity_check").fetchone()[0],
                con.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
    finally:
        con.close()


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    daemon.require_root("a loop device and mounts")
    daemon.own_mount_namespace()
    work = tempfile.mkdtemp(prefix="iowatch-e2e-ro-", dir="/var/tmp")
    probe_dir, image, state = (os.path.join(work, n) for n in ("probes", "state.img", "state"))
    os.makedirs(probe_dir)
    os.makedirs(state)
    loop, mounted, d = None, False, None
    r = daemon.Results()
    try:
        with open(image, "wb") as f:
            f.truncate(32 << 20)
        subprocess.run(["mkfs.ext4", "-q", image], check=True)
        loop = subprocess.run(["losetup", "-f", "--show", image], check=True, capture_output=True,
                              text=True).stdout.strip()
        subprocess.run(["mount", "-o", "errors=remount-ro", loop, state], check=True)
        mounted = True
        d = daemon.Daemon(sys.argv[1], config=config(probe_dir), state_dir=state)
        d.start()
        ok, samples = d.scrape_until(lambda s: ok_runs(s) >= 3, 20)
        r.check(ok and daemon.values(samples, "iowatch_probe_store_up") == [1],
                "3 runs stored before the fault", d.stderr()[-2000:])
        before_fault = stored(state)[1]

        with open(f"/sys/fs/ext4/{os.path.basename(loop)}/trigger_fs_error", "w") as f:
            f.write("1")
        ok, samples = d.scrape_until(lambda s: daemon.values(s, "iowatch_probe_store_up") == [0], 15)
        r.check(ok, "read-only: store_up goes to 0", d.stderr()[-3000:])
        start_ok = ok_runs(samples)
        ok, samples = d.scrape_until(lambda s: ok_runs(s) >= start_ok + 3, 20)
        r.check(ok, "read-only: probes still run (3 more ok runs)")
        errors = daemon.values(samples, "iowatch_probe_store_errors_total")
        r.check(errors and errors[0] >= 3, f"read-only: store errors counted per run ({errors})")
        r.check(daemon.values(samples, "iowatch_iostat_utilization_ratio"),
                "read-only: the iostat series are served")
        r.check(d.get("/healthz")[0] == 200, "read-only: /healthz answers")
        logged = [l for l in d.stderr().splitlines() if "probe store" in l and "error" in l.lower()]
        r.check(len(logged) == 1 and state in logged[0],
                "read-only: the error is logged once, with the path", "\n".join(logged[:5]))
        code, seconds = d.stop()
        r.check(code == 0 and seconds < 5, f"SIGTERM: exit {code} in {seconds:.1f} s",
                d.stderr()[-2000:])
        d.close()
        d = None

        subprocess.run(["umount", state], check=True)
        mounted = False
        fsck = subprocess.run(["e2fsck", "-fy", loop], capture_output=True, text=True)
        r.check(fsck.returncode in (0, 1), f"e2fsck repaired the image (exit {fsck.returncode})",
                fsck.stdout[-1000:])
        subprocess.run(["mount", loop, state], check=True)
        mounted = True
        integrity, count = stored(state)
        r.check(integrity == "ok" and count >= before_fault,
                f"read-write again: {count} runs, {before_fault} stored before the fault, "
                f"integrity {integrity}")
        d = daemon.Daemon(sys.argv[1], config=config(probe_dir), state_dir=state)
        d.start()
        ok, samples = d.scrape_until(lambda s: ok_runs(s) >= 2 and
                           daemon.values(s, "iowatch_probe_store_up") == [1], 20)
        r.check(ok, "a new daemon stores again", d.stderr()[-2000:])
        d.stop()
        r.check(stored(state)[1] >= count + 1, "the new runs are in the store")
    finally:
        if d is not None:
            d.close()
        if mounted:
            subprocess.run(["umount", "-l", state], check=False)
        if loop:
            subprocess.run(["losetup", "-d", loop], check=False)
        subprocess.run(["rm", "-rf", work], check=False)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
