#!/usr/bin/python3
"""What of the iowatch binary `iowatch serve` keeps resident stays within its budget.

The kernel maps a file's cached pages 64 KiB around each page fault, so the daemon's code,
scattered among the commands', made nearly the whole binary resident (4.1 MiB of its RSS on
the 1,000-device tree). The linker now lays out the functions the daemon runs first
(cmake/text_order.cmake, from cmake/serve_text_order.txt): about 2.1 MiB. This starts the
daemon on the 1,000-device tree of tests/bench/serve_vs_node_exporter.py (every source but
SMART, probes off), scrapes it plain and gzipped, and sums the resident pages of the
binary's own mappings (/proc/PID/smaps). Over budget, the list no longer covers what the
daemon runs: regenerate it with scripts/text_order.py.

Usage: resident_text.py IOWATCH
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import serve_vs_node_exporter as bench  # noqa: E402

BUDGET_MIB = 2.75
SCRAPES = 4


def resident_kib(pid, path):
    """Resident KiB of the mappings of `path` in process `pid`."""
    total, in_file = 0, False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            fields = line.split()
            if "-" in fields[0] and not fields[0].endswith(":"):
                in_file = len(fields) > 5 and fields[5] == path
            elif fields[0] == "Rss:" and in_file:
                total += int(fields[1])
    return total


def main():
    binary = os.path.realpath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="iowatch-resident-text-") as tmp:
        tree_args = bench.all_sources_tree(tmp)
        port = bench.free_port()
        daemon = subprocess.Popen([binary, "serve", f"--web.listen-address=127.0.0.1:{port}",
                                   *tree_args, "--log.level=error"])
        try:
            url = f"http://127.0.0.1:{port}/metrics"
            bench.wait_up(url, timeout=60)
            for i in range(SCRAPES):
                bench.fetch(url, gzip=i % 2 == 1)
                time.sleep(1)
            kib = resident_kib(daemon.pid, binary)
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
    print(f"iowatch serve on 1,000 devices: {kib / 1024:.2f} MiB of {binary} resident "
          f"(budget {BUDGET_MIB} MiB)")
    if kib == 0:
        sys.exit(f"FAIL no resident page of {binary} found in the daemon's smaps")
    if kib > BUDGET_MIB * 1024:
        sys.exit(f"FAIL {kib / 1024:.2f} MiB is over the budget of {BUDGET_MIB} MiB: the "
                 "functions the daemon runs are no longer laid out together. Regenerate "
                 "cmake/serve_text_order.txt: scripts/text_order.py build/iowatch, then rebuild")


if __name__ == "__main__":
    main()
