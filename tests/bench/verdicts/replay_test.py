#!/usr/bin/env python3
"""The recorded verdict scenarios (recordings/: quiet, load, slowdown; record.py made them on
this project's VM) replayed through the daemon's classifier and judge (replay_verdicts), with
what README's "Regression verdicts" table states checked:
  - the current judge raises nothing on the quiet and the busy-but-healthy recording, and
    nothing outside the throttle windows of the slowdown one;
  - it flags every throttle window of every job within hysteresis + 1 judged runs;
  - the detector before issue 13 raised false alarms on the busy recording (the point of it).

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
          "judged_outside", "windows", "detected", "worst_runs", "worst_seconds")


def unpack(workdir):
    dirs = []
    for name in sorted(os.listdir(RECORDINGS)):
        src = os.path.join(RECORDINGS, name)
        dst = os.path.join(workdir, name)
        os.makedirs(dst)
        with lzma.open(os.path.join(src, "iowatch.db.xz")) as f, \
                open(os.path.join(dst, "iowatch.db"), "wb") as out:
            shutil.copyfileobj(f, out)
        shutil.copy(os.path.join(src, "events.json"), dst)
        dirs.append(dst)
    return dirs


def main():
    binary = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory(prefix="iowatch-replay-") as workdir:
        dirs = unpack(workdir)
        out = subprocess.run([binary, "--tsv"] + dirs, capture_output=True, text=True, check=True)
    rows = [dict(zip(FIELDS, line.split("\t"))) for line in out.stdout.splitlines()]
    for row in rows:
        for key in FIELDS[3:]:
            row[key] = float(row[key])
        print("\t".join(str(row[k]) for k in FIELDS))

    def check(ok, what):
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            failures.append(what)

    scenarios = {row["scenario"] for row in rows}
    check({"quiet", "load", "slowdown"} <= scenarios, f"three scenarios recorded ({scenarios})")
    for row in rows:
        if row["variant"] != "bands":
            continue
        where = f"{row['name']} ({row['scenario']})"
        check(row["false_raises"] == 0, f"{where}: no false alarm ({row['false_raises']:.0f})")
        check(row["judged"] > 0, f"{where}: runs are judged ({row['judged']:.0f})")
        if row["scenario"] == "slowdown":
            check(row["windows"] > 0 and row["detected"] == row["windows"],
                  f"{where}: every window flagged ({row['detected']:.0f} of {row['windows']:.0f})")
            check(row["worst_runs"] <= HYSTERESIS + 1,
                  f"{where}: within hysteresis + 1 judged runs (worst {row['worst_runs']:.0f})")
    before = [r for r in rows if r["variant"] == "before" and r["scenario"] == "load"]
    check(before and before[0]["false_raises"] > 0,
          "the detector before issue 13 raised false alarms on the busy recording")
    if failures:
        print(f"{len(failures)} checks failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
