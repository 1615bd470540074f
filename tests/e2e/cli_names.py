#!/usr/bin/python3
"""A name the user gives a command is echoed in its errors with its control bytes shown, never
sent to the terminal (no root).

`iowatch health -d $'\\e[2J'` cleared the terminal of whoever read the error: every name the
user gives (a device, an option's value, a job) goes through the terminal-safe form ("\\x1b").

Usage: cli_names.py IOWATCH_BINARY
"""
import os
import subprocess
import sys
import tempfile

import daemon

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "real-vm")
NAME = "sd\x1b]0;PWNED\x07\x1b[2J"
SHOWN = "sd\\x1b]0;PWNED\\x07\\x1b[2J"


def run(argv):
    return subprocess.run(argv, capture_output=True, timeout=60)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    iowatch = os.path.abspath(sys.argv[1])
    roots = [f"--path.procfs={FIXTURE}/proc", f"--path.sysfs={FIXTURE}/sys"]
    r = daemon.Results()
    with tempfile.TemporaryDirectory(prefix="iowatch-cli-names-", dir="/var/tmp") as state:
        for what, args in (
                ("health -d", ["health", "-d", NAME, "--no-smart", "--state.dir", state]),
                ("advise DEVICE", ["advise", NAME]),
                ("probe ARGUMENT", ["probe", NAME]),
                ("probe --direct=VALUE", ["probe", f"--direct={NAME}"]),
                ("baseline --state.dir", ["baseline", "list", "--state.dir",
                                          os.path.join(state, NAME)]),
                ("baseline ACTION", ["baseline", NAME]),
                ("baseline --OPTION", ["baseline", "list", f"--{NAME}"]),
        ):
            result = run([iowatch, *roots, *args])
            err = result.stderr.decode(errors="replace")
            r.check(result.returncode == 2 and "\x1b" not in err and "\x07" not in err and
                    SHOWN in err,
                    f"iowatch {what}: the name is shown escaped in the error",
                    f"exit {result.returncode}, stderr {err[:400]!r}")
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
