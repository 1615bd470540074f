#!/usr/bin/python3
"""`iowatch baseline capture` killed with SIGKILL at random moments loses nothing.

store_writer fills a store under /var/tmp with 600 runs; then, thirty times,
`iowatch baseline capture randread-4k --runs=250` starts and gets a SIGKILL
after a random delay between 0 and 1.3 times the duration of an undisturbed
capture (measured first): before its transaction, inside it, or after. After
each kill python's sqlite3 opens the file as another process would and checks
  - PRAGMA integrity_check is "ok", PRAGMA foreign_key_check finds nothing;
  - every baseline is whole: its run_count equals its baseline_runs rows and it
    has metrics (a transaction is all or nothing);
  - no run was lost (the capture only reads runs);
and at the end a capture that is not killed succeeds. No root needed.

Usage: baseline_kill9.py IOWATCH_BINARY STORE_WRITER_BINARY [--seed S]
"""
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
from baseline_cli import fill_store

JOB = "randread-4k"
RUNS = 250
ROUNDS = 30


def query(db, sql):
    con = sqlite3.connect(db, timeout=10)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def check(db, results, label, runs_before):
    integrity = query(db, "PRAGMA integrity_check")
    fk = query(db, "PRAGMA foreign_key_check")
    broken = query(db, "SELECT b.id, b.run_count, "
                       "(SELECT COUNT(*) FROM baseline_runs r WHERE r.baseline_id = b.id), "
                       "(SELECT COUNT(*) FROM baseline_metrics m WHERE m.baseline_id = b.id) "
                       "FROM baselines b")
    broken = [row for row in broken if row[1] != row[2] or row[3] == 0]
    runs = query(db, "SELECT COUNT(*) FROM runs")[0][0]
    return results.check(integrity == [("ok",)] and not fk and not broken and runs == runs_before,
                         f"{label}: consistent",
                         f"integrity {integrity}, fk {fk[:3]}, broken baselines {broken[:3]}, "
                         f"runs {runs} of {runs_before}")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--seed=")]
    seeds = [int(a.split("=", 1)[1]) for a in sys.argv[1:] if a.startswith("--seed=")]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    iowatch, writer = (os.path.abspath(a) for a in args)
    seed = seeds[0] if seeds else random.randrange(1 << 30)
    rng = random.Random(seed)
    print(f"seed {seed} (--seed={seed} repeats this run)")
    daemon.exit_on_sigterm()
    results = daemon.Results()
    workdir = tempfile.mkdtemp(prefix="iowatch-baseline-kill9-", dir="/var/tmp")
    db = os.path.join(workdir, "iowatch.db")
    argv = [iowatch, "baseline", f"--state.dir={workdir}", "capture", JOB, f"--runs={RUNS}"]
    try:
        fill_store(writer, db, min_runs=2 * RUNS + 100)
        runs_before = query(db, "SELECT COUNT(*) FROM runs")[0][0]
        started = time.monotonic()
        first = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        duration = time.monotonic() - started
        results.check(first.returncode == 0, f"an undisturbed capture takes {duration:.3f} s",
                      first.stderr)
        outcomes = {"killed": 0, "finished first": 0}
        for i in range(ROUNDS):
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(rng.uniform(0, 1.3 * duration))
            proc.send_signal(signal.SIGKILL)
            _, err = proc.communicate(timeout=30)
            outcomes["killed" if proc.returncode == -signal.SIGKILL else "finished first"] += 1
            if proc.returncode not in (0, -signal.SIGKILL):
                results.check(False, f"round {i}: capture exit {proc.returncode}", err.decode())
            if not check(db, results, f"round {i}", runs_before):
                break
        print(f"     {outcomes['killed']} captures killed, {outcomes['finished first']} "
              "finished before the kill")
        last = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        results.check(last.returncode == 0 and f"from {RUNS} runs" in last.stdout,
                      "a capture after the kills succeeds", last.stdout[:300] + last.stderr)
        check(db, results, "at the end", runs_before)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
