#!/usr/bin/env python3
"""The passive recordings (recordings/passive-*: record.py's passive scenarios, made on this
project's VM, packed by pack.py) replayed through the daemon's passive judge (replay_passive
--check): on the recording's loop device, by the device stage, no false alarm, at least 80 %
of the minutes with 50 requests or more judged once learned, every slowdown raised within 5
minutes (15 for passive-bursty and -diurnal). Diskstats' figures are printed beside them, not checked.

The check must be able to fail: each recording is also replayed with its slowdown moved to
its first ten minutes, where the model is still learning, so that the real slowdown's raise
is a false alarm and the moved one is not raised: --check must exit 1 and say both.

  passive_replay_test.py REPLAY_PASSIVE_BINARY

Exits 77 (skipped) when no passive recording is committed.
"""
import glob
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDINGS = os.path.join(HERE, "recordings")


def unpack(src, dst, events=None):
    """A recording's store and events.json under dst (events replaced when given)."""
    os.makedirs(dst)
    with lzma.open(os.path.join(src, "iowatch.db.xz")) as z, \
            open(os.path.join(dst, "iowatch.db"), "wb") as f:
        shutil.copyfileobj(z, f)
    if events is None:
        shutil.copy(os.path.join(src, "events.json"), dst)
    else:
        with open(os.path.join(dst, "events.json"), "w") as f:
            json.dump(events, f)


def main():
    binary = sys.argv[1]
    recordings = sorted(d for d in glob.glob(os.path.join(RECORDINGS, "passive-*"))
                        if os.path.isfile(os.path.join(d, "iowatch.db.xz")))
    if not recordings:
        print(f"no passive recording under {RECORDINGS}: nothing to replay")
        return 77
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for src in recordings:
            name = os.path.basename(src)
            unpack(src, os.path.join(tmp, name))
            run = subprocess.run([binary, "--check", os.path.join(tmp, name)],
                                 capture_output=True, text=True)
            print(run.stdout + run.stderr)
            if run.returncode != 0:
                failed.append(f"{name}: replay_passive --check exited {run.returncode}")
            with open(os.path.join(src, "events.json")) as f:
                events = json.load(f)
            start = events["start_unix_ms"]
            events["throttle"] = [{"on_unix_ms": start, "off_unix_ms": start + 600_000}]
            moved = os.path.join(tmp, name + "-moved")
            unpack(src, moved, events)
            run = subprocess.run([binary, "--check", moved], capture_output=True, text=True)
            said = run.stderr
            if run.returncode != 1 or "false alarm" not in said or "slowdown 1 raised" not in said:
                failed.append(f"{name} with its slowdown moved to its first 10 minutes: expected "
                              f"--check to exit 1 naming a false alarm and the unraised "
                              f"slowdown, got {run.returncode}: {said.strip()!r}")
    for f in failed:
        print(f"FAILED: {f}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
