#!/usr/bin/python3
"""A report that cannot be written is an error, not exit 0 (no root).

Every reporting command with stdout on /dev/full (writes fail with ENOSPC):
iowatch exits 2 with one line naming standard output and the errno text; the
reference tools fail too (sysstat 12.6's iostat exits 6, procps 4.0.2's vmstat
exits 1), so a script that checks exit statuses sees the same thing.

Usage: cli_write_errors.py IOWATCH_BINARY
"""
import os
import subprocess
import sys

import daemon

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "real-vm")
MESSAGE = "standard output: cannot write the report: No space left on device"


def to_full(argv):
    with open("/dev/full", "w") as full:
        return subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    iowatch = os.path.abspath(sys.argv[1])
    roots = [f"--path.procfs={FIXTURE}/proc", f"--path.sysfs={FIXTURE}/sys"]
    r = daemon.Results()
    for name, args in (("iostat", ["iostat"]), ("iostat -x", ["iostat", "-x"]),
                       ("iostat -o JSON", ["iostat", "-o", "JSON"]), ("vmstat", ["vmstat"]),
                       ("vmstat -w 1 2", ["vmstat", "-w", "1", "2"]), ("probe --help", ["probe", "--help"])):
        run = to_full([iowatch, *roots, *args])
        command = args[0]
        r.check(run.returncode == 2 and run.stderr == f"iowatch {command}: {MESSAGE}\n",
                f"iowatch {name} > /dev/full: exit 2, one line naming standard output",
                f"exit {run.returncode}, stderr {run.stderr!r}")
    for tool, status in (("iostat", 6), ("vmstat", 1)):
        run = to_full([tool])
        r.check(run.returncode == status,
                f"reference {tool} > /dev/full fails too (exit {run.returncode})", run.stderr)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
