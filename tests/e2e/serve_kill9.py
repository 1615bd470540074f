#!/usr/bin/python3
"""kill -9 of `iowatch serve` while it probes loses no committed run (live daemon, real I/O).

One state directory under /var/tmp, a job probing every second (psync randrw,
direct, 200 ms). Eight times: start the daemon on that directory, scrape it
until a random moment 1.5-5 s later (in a probe, a commit, a baseline write,
between runs: wherever it is), SIGKILL it, then open the database with
python's sqlite3 module, as another process would, and check that
  - PRAGMA integrity_check is "ok" and foreign_key_check finds nothing;
  - every run in the file is whole: a read and a write row in run_ops and its
    run_metrics (a transaction is all or nothing), and was a completed ok run
    (a killed probe never reaches the store);
  - no run committed before was lost: the row count only grows, and by at
    least the ok runs the daemon had counted before the kill, less the one
    it may have been storing at that moment (the counter moves first);
  - at most one baseline per job, and it names runs that exist;
  - every run the series' stored state went through has whether it was
    judged in run_verdicts, and no later run has (the state and the verdicts
    of the runs it went through are one transaction; runs a kill left
    unjudged are judged again, verdict included, at the next run). Runs before
    the first verdict are let off: a kill between a new series' first run
    and its first state (stored as the series opens) leaves none to catch up
    from.
After the last round the daemon starts once more on the file and keeps
probing (the store opens, new runs are added).

Usage: serve_kill9.py IOWATCH_BINARY [--rounds N] [--seed S]
"""
import argparse
import os
import random
import sqlite3
import sys
import tempfile
import time

import daemon

JOB = "e2e-kill9"
CONFIG = daemon.one_probe_config(JOB, rw="randrw", runtime="200ms",
                                  baseline="  baseline:\n    runs: 3\n    min_age: 0s\n"
                                  "    contention: {min_foreign_load: 1e9, max_cpu_wait: 1, max_cpu_steal: 1}\n")


def check_file(db, results, label):
    """Checks the file; returns its number of runs."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        integrity = con.execute("PRAGMA integrity_check").fetchall()
        results.check(integrity == [("ok",)], f"{label}: integrity_check is ok", str(integrity)[:500])
        fk = con.execute("PRAGMA foreign_key_check").fetchall()
        results.check(not fk, f"{label}: foreign_key_check finds nothing", str(fk)[:500])
        runs = dict(con.execute("SELECT id, result || '/' || run_end FROM runs"))
        ops = dict(con.execute("SELECT run_id, count(*) FROM run_ops GROUP BY run_id"))
        metrics = dict(con.execute("SELECT run_id, count(*) FROM run_metrics GROUP BY run_id"))
        baselines = con.execute("SELECT job, count(*) FROM baselines GROUP BY job").fetchall()
        orphans = con.execute("SELECT count(*) FROM baseline_runs WHERE run_id NOT IN "
                              "(SELECT id FROM runs)").fetchone()[0]
        through = con.execute("SELECT max(through_run_id) FROM series_states WHERE job = ?",
                              (JOB,)).fetchone()[0] or 0
        verdicts = {i for (i,) in con.execute("SELECT run_id FROM run_verdicts")}
    finally:
        con.close()
    partial = [i for i in runs if ops.get(i, 0) != 2 or metrics.get(i, 0) == 0]
    results.check(not partial, f"{label}: all {len(runs)} runs are whole (2 ops, metrics)",
                  f"partial runs {partial[:20]}")
    not_ok = {i: r for i, r in runs.items() if r != "ok/completed"}
    results.check(not not_ok, f"{label}: only completed ok runs", str(not_ok)[:500])
    results.check(all(n == 1 for _, n in baselines), f"{label}: at most one baseline per job",
                  str(baselines))
    results.check(orphans == 0, f"{label}: baselines name existing runs", f"{orphans} orphans")
    first = min(verdicts, default=through + 1)
    unjudged = sorted(i for i in runs if first <= i <= through and i not in verdicts)
    ahead = sorted(i for i in verdicts if i > through)
    results.check(not unjudged and not ahead,
                  f"{label}: the runs up to the stored state's ({through}) have their verdicts, "
                  f"later ones none", f"without: {unjudged[:20]}; ahead of the state: {ahead[:20]}")
    return len(runs)


def ok_runs(d):
    try:
        return daemon.completed_runs(d.scrape(), JOB)
    except (OSError, RuntimeError):
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("iowatch")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    daemon.exit_on_sigterm()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"seed {seed} (rerun with --seed {seed})", flush=True)
    rng = random.Random(seed)
    tempfile.tempdir = "/var/tmp"
    r = daemon.Results()
    d = daemon.Daemon(args.iowatch, config=CONFIG)
    try:
        db = os.path.join(d.dir, "state", "iowatch.db")
        stored = 0
        for round_no in range(1, args.rounds + 1):
            d.start()
            counted, kill_at = 0, time.monotonic() + rng.uniform(1.5, 5.0)
            while time.monotonic() < kill_at:
                counted = ok_runs(d) or counted
                time.sleep(0.05)
            d.proc.kill()
            d.proc.wait()
            rows = check_file(db, r, f"round {round_no}")
            r.check(rows >= stored + max(counted - 1, 0),
                    f"round {round_no}: no committed run lost ({stored} before, "
                    f"{counted:.0f} counted, {rows} now)")
            stored = rows
        r.check(stored >= args.rounds, f"runs were stored across the rounds ({stored})")

        d.start()
        deadline, counted = time.monotonic() + 15, 0
        while time.monotonic() < deadline and counted < 2:
            counted = ok_runs(d) or 0
            time.sleep(0.1)
        code, _ = d.stop()
        r.check(code == 0, "restarted on the file: probes again, then exits 0", d.stderr()[-2000:])
        rows = check_file(db, r, "after the restart")
        r.check(rows >= stored + counted, f"the restarted daemon added its runs ({stored} -> {rows})")
    finally:
        d.close()
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
