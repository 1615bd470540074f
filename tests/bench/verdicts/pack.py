#!/usr/bin/env python3
"""Packs a recording made by record.py into recordings/NAME: its store, vacuumed and
xz-compressed (about 300 KB for 30 minutes of the bundled jobs every 15 s), and its
events.json, as replay_test.py and replay_verdicts read them.

  pack.py RECORDING_DIR NAME [--drop-device=DEV]...

--drop-device removes DEV's passive windows: another recording's loop device that the daemon
watched because two recordings ran at once (each daemon watches every loop device).
"""
import lzma
import os
import shutil
import sqlite3
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--drop-device=")]
    dropped = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--drop-device=")]
    src, name = args[0], args[1]
    dst = os.path.join(HERE, "recordings", name)
    os.makedirs(dst, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "iowatch.db")
        with sqlite3.connect(os.path.join(src, "state", "iowatch.db")) as live, \
                sqlite3.connect(copy) as out:
            live.backup(out)
        with sqlite3.connect(copy) as out:
            for device in dropped:
                n = out.execute("DELETE FROM passive_windows WHERE device = ?", (device,)).rowcount
                print(f"{device}: {n} passive windows dropped")
            out.commit()
            out.execute("PRAGMA journal_mode = DELETE")
            out.execute("VACUUM")
        with open(copy, "rb") as f, lzma.open(os.path.join(dst, "iowatch.db.xz"), "wb",
                                              preset=9) as z:
            shutil.copyfileobj(f, z)
    shutil.copy(os.path.join(src, "events.json"), dst)
    print(f"{dst}: {os.path.getsize(os.path.join(dst, 'iowatch.db.xz'))} bytes")


if __name__ == "__main__":
    main()
