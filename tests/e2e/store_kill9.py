#!/usr/bin/python3
"""Crash consistency of the probe store: a kill -9 at any moment loses no committed run.

store_writer (tests/unit/probes/store/store_writer_main.cc) adds synthetic runs to a
store under /var/tmp as fast as it can and prints "run ID OPS METRICS" after
each AddRun returned. Twenty times, on the same database: start it, SIGKILL it
after a random 0.05-0.6 s (inside a transaction, an fsync, a checkpoint: wherever
it is), then open the file with python's sqlite3 module, as another process
would, and check that
  - PRAGMA integrity_check says "ok" and PRAGMA foreign_key_check finds nothing;
  - every run the writer reported is there, with its run_ops and run_metrics rows;
  - every run in the file is whole (a run row never lacks its directions or
    metrics: a transaction is all or nothing), including the one that may have
    committed just before the kill and was never reported;
  - ids only grow from one round to the next (nothing committed was rolled back).
A kill before the schema's first migration committed leaves a file without tables,
which is whole too (the next writer migrates it) while no run was reported.
No root needed.

Usage: store_kill9.py STORE_WRITER_BINARY [--rounds N] [--seed S]
"""
import argparse
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

import daemon


def check_file(db, reported, results, label):
    """Checks the database against the runs reported so far; returns the largest id in it."""
    con = sqlite3.connect(db, timeout=10)
    try:
        integrity = con.execute("PRAGMA integrity_check").fetchall()
        results.check(integrity == [("ok",)], f"{label}: integrity_check is ok", str(integrity)[:500])
        fk = con.execute("PRAGMA foreign_key_check").fetchall()
        results.check(not fk, f"{label}: foreign_key_check finds nothing", str(fk)[:500])
        if con.execute("PRAGMA user_version").fetchone()[0] == 0:
            # Killed before the schema's first migration committed (each is one transaction):
            # an empty file, which the next open migrates. Nothing can have been reported.
            results.check(not reported, f"{label}: no schema yet, and no run was reported",
                          f"{len(reported)} runs reported")
            return 0
        runs = {r[0] for r in con.execute("SELECT id FROM runs")}
        ops = dict(con.execute("SELECT run_id, count(*) FROM run_ops GROUP BY run_id"))
        metrics = dict(con.execute("SELECT run_id, count(*) FROM run_metrics GROUP BY run_id"))
    finally:
        con.close()
    missing = [i for i in reported if i not in runs]
    results.check(not missing, f"{label}: all {len(reported)} reported runs are present",
                  f"missing ids {missing[:20]}")
    wrong = [i for i, (n_ops, n_metrics) in reported.items()
             if ops.get(i, 0) != n_ops or metrics.get(i, 0) != n_metrics]
    results.check(not wrong, f"{label}: reported runs have their run_ops and run_metrics rows",
                  f"ids {wrong[:20]}")
    partial = [i for i in runs if ops.get(i, 0) != 2 or metrics.get(i, 0) != 4]
    results.check(not partial, f"{label}: all {len(runs)} runs in the file are whole",
                  f"partial runs {partial[:20]}")
    return max(runs, default=0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("writer")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    daemon.exit_on_sigterm()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"seed {seed} (rerun with --seed {seed})", flush=True)
    rng = random.Random(seed)
    results = daemon.Results()
    workdir = tempfile.mkdtemp(prefix="iowatch-store-kill9-", dir="/var/tmp")
    db = os.path.join(workdir, "iowatch.db")
    reported = {}  # id -> (run_ops rows, run_metrics rows)
    last_max = 0
    try:
        for round_number in range(1, args.rounds + 1):
            label = f"round {round_number}"
            proc = subprocess.Popen([args.writer, db, str(seed + round_number)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(rng.uniform(0.05, 0.6))
            alive = proc.poll() is None
            proc.send_signal(signal.SIGKILL)
            out, err = proc.communicate(timeout=10)
            if not results.check(alive, f"{label}: the writer was still writing when killed",
                                 f"exit {proc.returncode}: {err.strip()[:500]}"):
                continue
            results.check(not err.strip(), f"{label}: the writer reported no error", err[:500])
            ids = []
            for line in out.split("\n")[:-1]:  # the text after the last newline may be cut short
                _, run_id, n_ops, n_metrics = line.split()
                ids.append(int(run_id))
                reported[int(run_id)] = (int(n_ops), int(n_metrics))
            results.check(all(i > last_max for i in ids),
                          f"{label}: {len(ids)} new runs, ids after the previous file's last",
                          f"previous max {last_max}, ids {ids[:10]}")
            last_max = max(last_max, check_file(db, reported, results, label))
        results.check(len(reported) >= args.rounds, f"{len(reported)} runs committed in all",
                      "the writer hardly committed anything")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
