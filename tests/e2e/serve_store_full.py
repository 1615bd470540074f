#!/usr/bin/python3
"""A full state directory: `iowatch serve` keeps serving, says so, and recovers (root).

The state directory is a 4 MiB tmpfs filled to the last byte before the daemon starts; the
probe file lives on the disk under /var/tmp (an absolute `directory`), so probes run while
the SQLite store cannot be written. Checked, through scrapes and the log:
1. while full: probes run (runs_total{result="ok"} grows), iowatch_probe_store_up is 0,
   iowatch_probe_store_errors_total counts each run, the iostat series are still served, and
   the error is logged once with the path (not once per run);
2. the filler is deleted ("space returns"): store_up goes to 1, the next runs are in the
   SQLite file (integrity_check ok), "writable again" is logged, the error count stops.
The tmpfs is unmounted and every file removed at the end.

Usage: serve_store_full.py IOWATCH_BINARY
"""
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

import daemon

JOB = "e2e-full"


def config(probe_dir):
    return daemon.one_probe_config(JOB, directory=probe_dir, runtime="200ms")


def fill(directory):
    """Writes a file until the filesystem refuses more; returns its path."""
    path = os.path.join(directory, "filler")
    with open(path, "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    return path


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    daemon.require_root("mounting a tmpfs")
    daemon.own_mount_namespace()
    probe_dir = tempfile.mkdtemp(prefix="iowatch-e2e-probes-", dir="/var/tmp")
    d = daemon.Daemon(sys.argv[1], config=config(probe_dir))
    state = os.path.join(d.dir, "state")
    os.makedirs(state)
    mounted = False
    r = daemon.Results()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", state], check=True)
        mounted = True
        filler = fill(state)
        d.start()

        def ok_runs(s):
            return daemon.completed_runs(s, JOB)

        ok, samples = d.scrape_until(lambda s: ok_runs(s) >= 3, 20)
        r.check(ok, "state dir full: probes still run (3 ok runs)", d.stderr()[-3000:])
        r.check(daemon.values(samples, "iowatch_probe_store_up") == [0], "store_up is 0")
        errors = daemon.values(samples, "iowatch_probe_store_errors_total")
        r.check(errors and errors[0] >= 3, f"store errors counted per run ({errors})")
        r.check(daemon.values(samples, "iowatch_iostat_utilization_ratio"),
                "the iostat series are still served")
        logged = [l for l in d.stderr().splitlines() if "probe store" in l and "error" in l.lower()]
        r.check(len(logged) == 1 and state in logged[0],
                "the store error is logged once, with the path", "\n".join(logged[:5]))

        os.remove(filler)
        ok, samples = d.scrape_until(lambda s: daemon.values(s, "iowatch_probe_store_up") == [1], 15)
        r.check(ok, "space returns: store_up goes to 1", d.stderr()[-3000:])
        stopped_at = daemon.values(samples, "iowatch_probe_store_errors_total")
        before = ok_runs(samples)
        ok, samples = d.scrape_until(lambda s: ok_runs(s) >= before + 2, 15)
        r.check(ok, "two more ok runs after the recovery")
        r.check(daemon.values(samples, "iowatch_probe_store_errors_total") == stopped_at,
                "no store error after the recovery")
        r.check(any("writable again" in l for l in d.stderr().splitlines()),
                "the recovery is logged")
        code, _ = d.stop()
        r.check(code == 0, "clean exit", d.stderr()[-2000:])
        con = sqlite3.connect(f"file:{state}/iowatch.db?mode=ro", uri=True, timeout=10)
        try:
            integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
            stored = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        finally:
            con.close()
        r.check(integrity == "ok", "integrity_check ok", integrity)
        r.check(stored >= 2, f"the runs after the recovery are stored ({stored})")
    finally:
        if d.alive():
            d.proc.kill()
            d.proc.wait()
        if mounted:
            subprocess.run(["umount", state], check=False)
        d.close()
        subprocess.run(["rm", "-rf", probe_dir], check=False)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
