#!/usr/bin/env python3
"""The recorded verdict scenarios (recordings/: quiet, load, slowdown, busy, busyslow, busyloop;
record.py made them on this project's VM) replayed through the daemon's classifier and judge
(replay_verdicts), with what docs/benchmarks.md's "Regression verdicts" tables state checked:
  - the current judge raises nothing on the quiet, the load and the busy recordings but the
    known false alarms, and nothing outside the throttle windows of the slowdown ones;
  - it flags every throttle window of every job within hysteresis + 2 judged runs, and clears
    each within hysteresis + 2 judged runs after the window;
  - on the busy recording, with baselines learned inside the run (min_age 90 s, the busy-disk
    trial's setting), at least 60 % of runs are judged;
  - the first detector (every run judged, whatever its conditions) raised false alarms on the
    load recording (the point of classifying runs);
  - busyloop, replayed with the baselines it was recorded with (runs: 5, min_age: 60s): nothing
    raised before its loop device slowed down, and the slowdown raised within min_bad_span + 2
    judged runs (BUSYLOOP_GOAL_RUNS).
The gaps docs/benchmarks.md states are listed in KNOWN_GAPS by name: the check is that the
misses and false alarms are exactly those, so a new one fails, and so does one that closes
(update the list and docs/benchmarks.md with it).

  replay_test.py REPLAY_VERDICTS_BINARY
"""
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDINGS = os.path.join(HERE, "recordings")
HYSTERESIS = 3
FIELDS = ("name", "scenario", "variant", "runs", "judged", "contended", "false_raises",
          "judged_outside", "windows", "detected", "worst_runs", "worst_seconds", "missed",
          "false_alarms", "worst_clear", "uncleared")
NUMERIC = FIELDS[3:12] + ("worst_clear",)
# docs/benchmarks.md, "Regression verdicts: false alarms and detections". The one gap the
# load-band judge left, seqread-1m-qd8's second window (its runs under the hypervisor's steal,
# or in a load band whose baseline held the job near the throttle's cap), is closed: such runs
# are judged against earlier runs at least as stressed. Sorted lists, as replay_verdicts prints
# them sorted.
# busy (a busy disk on a shared CPU): the one false alarm it had, randwrite-4k-qd1's mean
# latency twice its prediction for three runs over 35 s right after a 5,000-IOPS random
# read/write phase (a host's write stall behind the virtual disk, which the guest's counters do
# not show), is gone since bad runs must span probes.baseline.min_bad_span (45 s) to raise.
KNOWN_GAPS = {
    "slowdown": {
        "missed": [],
        "false_alarms": [],
    },
    "busy": {
        "missed": [],
        "false_alarms": [],
    },
    # busyslow (busy's store, slowed down): the daemon capped at 8,000 IOPS and 500 MB/s beside
    # the irregular load. The cap binds only where the job would go faster: under the heavier
    # phases a healthy run is below it anyway, and such runs are rightly good, so the bad runs
    # come between good ones: some windows need more judged runs (up to 12) and seqread-1m-qd8's
    # first is not raised at min_age 20 min. Clearing: a good run judged against a baseline
    # wider than the slowdown was (the load model under 30 % steal) cannot tell a recovered disk
    # from a slow one and does not count (the tracker's informative rule), so a raise stands
    # until runs with a tighter baseline come: randread-4k-qd1's first after 10 judged runs,
    # seqread-1m-qd8's second not in the recording's last two minutes.
    # busyloop: the goal (raised within min_bad_span + 2 judged runs) is not met: in 6 minutes
    # after the cap, 70 judged runs of 70, nothing is raised (2 bad runs, not in a row). The
    # load bands' 5-run baselines were learned from runs that the shared CPU slowed by up to 4x
    # (the buffered loop's reads are page-cache copies: 4,000-129,000 IOPS before the cap,
    # median 30,758), so their spreads are 60 % and 115 % of the median: 3 spreads put the IOPS
    # threshold below zero (never bad) and the mean latency's at 2.8x and 3.1x; the capped runs
    # were at IOPS 0.42-0.84x and mean latency 1.2-2.4x. The load model allowed 3.4-5.1x its
    # prediction; band 3's baseline, learned from the slowest runs, found capped runs faster.
    "busyloop": {
        "missed": ["randread-4k-qd4/w1"],
        "false_alarms": [],
    },
    "busyslow": {
        "missed": ["seqread-1m-qd8/w1"],
        "false_alarms": [],
        "worst_runs": 12,
        "worst_clear": 10,
        "uncleared": ["seqread-1m-qd8/w2"],
    },
}
# Recordings replayed with the policy they were recorded with rather than the tests' (20 min,
# 10 runs), and the judged runs their windows must be raised within.
# busyloop's slowdown is an IOPS cap on the loop device (blk-throttle), which holds a request
# back to its next time slice: the probe's median p99.9 latency went from 7.5 ms to 70 ms (x9)
# while its mean rose 1.6x, a tail the reviewer's slowdown (the loop switched to direct I/O,
# nothing raised) did not have, and on which today's judge raised it. The replay judges every
# metric the daemon does but p99.9, so that what it checks is what the reviewer saw: IOPS 40 %
# lower and the mean latency 1.6x.
BUSYLOOP_METRICS = ("iops,bandwidth_bytes,lat_mean_seconds,lat_p50_seconds,lat_p90_seconds,"
                    "lat_p99_seconds")
POLICIES = {"busyloop": ["--min-age=60s", "--runs=5", f"--metrics={BUSYLOOP_METRICS}"]}
# busyloop: one job every 5 s, 3 s long; bad runs must span min_bad_span (45 s) from the first's
# start to the last's end, which takes 10 runs ((10 - 1) x 5 s + 3 s = 48 s); the goal is those
# and 2 more judged runs after the loop device slowed down.
MIN_BAD_SPAN_S, BUSYLOOP_EVERY_S, BUSYLOOP_RUNTIME_S = 45, 5, 3
BUSYLOOP_GOAL_RUNS = -(-(MIN_BAD_SPAN_S - BUSYLOOP_RUNTIME_S) // BUSYLOOP_EVERY_S) + 1 + 2
GOAL_RUNS = {"busyloop": BUSYLOOP_GOAL_RUNS}
# The goal on a busy disk beside a CPU the hypervisor takes from, with baselines learned
# inside the run (runs: 10, min_age: 90s, the busy-disk trial's setting): at least 60 % of runs
# judged.
BUSY_MIN_AGE = "90s"
BUSY_JUDGED_SHARE = 0.60


def unpack(workdir):
    dirs = []
    for name in sorted(os.listdir(RECORDINGS)):
        if name.startswith("passive-"):  # the passive judge's: no probe runs (passive_replay_test.py)
            continue
        src = os.path.join(RECORDINGS, name)
        dst = os.path.join(workdir, name)
        os.makedirs(dst)
        with lzma.open(os.path.join(src, "iowatch.db.xz")) as f, \
                open(os.path.join(dst, "iowatch.db"), "wb") as out:
            shutil.copyfileobj(f, out)
        shutil.copy(os.path.join(src, "events.json"), dst)
        dirs.append(dst)
    return dirs


def replay(binary, dirs, *options):
    out = subprocess.run([binary, "--tsv", *options] + dirs, capture_output=True, text=True,
                         check=True)
    rows = [dict(zip(FIELDS, line.split("\t"))) for line in out.stdout.splitlines()]
    for row in rows:
        for key in NUMERIC:
            row[key] = float(row[key])
        for key in ("missed", "false_alarms", "uncleared"):
            row[key] = [] if row[key] == "-" else sorted(row[key].split(","))
        print("\t".join(str(row[k]) for k in FIELDS))
    return rows


def main():
    binary = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory(prefix="iowatch-replay-") as workdir:
        dirs = unpack(workdir)
        own = [d for d in dirs if os.path.basename(d) in POLICIES]
        dirs = [d for d in dirs if d not in own]
        rows = replay(binary, dirs)
        for d in own:
            rows += replay(binary, [d], *POLICIES[os.path.basename(d)])
        busy_dirs = [d for d in dirs if os.path.basename(d).startswith("busy")]
        busy_rows = replay(binary, busy_dirs, f"--min-age={BUSY_MIN_AGE}") if busy_dirs else []

    def check(ok, what):
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            failures.append(what)

    scenarios = {row["scenario"] for row in rows}
    check({"quiet", "load", "slowdown", "busy"} <= scenarios,
          f"four scenarios recorded ({scenarios})")
    for row in rows:
        if row["variant"] != "bands":
            continue
        where = f"{row['name']} ({row['scenario']})"
        gaps = KNOWN_GAPS.get(row["name"], KNOWN_GAPS.get(row["scenario"], {}))
        known = gaps.get("false_alarms", [])
        check(row["false_alarms"] == known,
              f"{where}: no false alarm{' but the known ' + str(len(known)) if known else ''} "
              f"({row['false_alarms'] or 'none'})")
        check(row["judged"] > 0, f"{where}: runs are judged ({row['judged']:.0f})")
        if row["scenario"] == "slowdown" or row["windows"] > 0:
            missed = gaps.get("missed", [])
            check(row["windows"] > 0 and row["missed"] == missed,
                  f"{where}: every window flagged{' but the known ' + str(missed) if missed else ''}"
                  f" ({row['detected']:.0f} of {row['windows']:.0f}; missed {row['missed']})")
            goal = GOAL_RUNS.get(row["name"], HYSTERESIS + 2)
            bound = gaps.get("worst_runs", goal)
            check(row["worst_runs"] <= bound,
                  f"{where}: within {bound} judged runs"
                  f"{f' (the known gap: the goal is {goal})' if bound != goal else ''}"
                  f" (worst {row['worst_runs']:.0f})")
            if row["name"] in GOAL_RUNS:
                inside = row["judged"] - row["judged_outside"]
                print(f"      {where}: {inside:.0f} judged runs in the window; "
                      + (f"raised at judged run {row['worst_runs']:.0f}"
                         if row["detected"] else "not raised"))
            uncleared = gaps.get("uncleared", [])
            check(row["uncleared"] == uncleared,
                  f"{where}: every raise cleared after its window"
                  f"{' but the known ' + str(uncleared) if uncleared else ''}"
                  f" ({row['uncleared'] or 'none'})")
            bound = gaps.get("worst_clear", HYSTERESIS + 2)
            check(row["worst_clear"] <= bound,
                  f"{where}: cleared within {bound} judged runs after the window "
                  f"(worst {row['worst_clear']:.0f})")
    for row in busy_rows:
        if row["variant"] != "bands" or row["windows"] > 0:
            continue
        share = row["judged"] / row["runs"]
        check(share >= BUSY_JUDGED_SHARE,
              f"{row['name']} at min_age {BUSY_MIN_AGE}: at least {BUSY_JUDGED_SHARE:.0%} of runs "
              f"judged ({row['judged']:.0f} of {row['runs']:.0f}, {share:.0%})")
        known = KNOWN_GAPS[row["name"]]["false_alarms"]
        check(row["false_alarms"] == known,
              f"{row['name']} at min_age {BUSY_MIN_AGE}: no false alarm but the known "
              f"({row['false_alarms'] or 'none'})")
    before = [r for r in rows if r["variant"] == "before" and r["scenario"] == "load"]
    check(before and before[0]["false_raises"] > 0,
          "the first detector raised false alarms on the load recording")
    if failures:
        print(f"{len(failures)} checks failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
