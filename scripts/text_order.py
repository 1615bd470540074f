#!/usr/bin/python3
"""Writes cmake/serve_text_order.txt: the functions `iowatch serve` runs, hottest first.

The linker lays these functions out first and side by side (cmake/text_order.cmake), so the
daemon's code fills a few hundred contiguous pages of the binary instead of touching pages all
over it. The kernel maps a file's cached pages 64 KiB around each page fault ("fault-around"),
so with the daemon's 1 MiB of code scattered over 4.6 MB of text nearly the whole binary was
resident: 4.1 MiB of the daemon's RSS, 2 MiB once the code it runs is packed.

What runs is recorded by valgrind's callgrind (every function executed, with its instruction
count; this installs valgrind first, through scripts/install-deps.sh), in two runs of the
daemon: on the generated 1,000-device tree with every source but SMART (the tree of
tests/bench/serve_vs_node_exporter.py), scraped plain and gzipped; and on this host's own
/proc and /sys with the bundled configuration (probes included). The union is sorted by
instructions, most first. Which rare paths a run takes (a read deadline missed under
valgrind's slowness, a probe job falling due) differs from run to run, so two runs list
slightly different functions. A function missing from the list still links, only further
away; layout.resident_text fails when enough of the daemon's code has moved out of the list
that its resident text is over budget.

Usage: scripts/text_order.py BUILD_DIR/iowatch [--out cmake/serve_text_order.txt]
Run by hand after changing what the daemon runs, then rebuild.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import serve_vs_node_exporter as bench  # noqa: E402

SCRAPES = 6
CALLS_LINE = re.compile(r"^calls=")
RECURSION_SUFFIX = re.compile(r"'\d+$")


def record(binary, serve_args, out_file):
    """Runs `iowatch serve` under callgrind into out_file, scrapes it, stops it."""
    port = bench.free_port()
    command = ["valgrind", "--tool=callgrind", "--demangle=no", "--compress-strings=no",
               "--compress-pos=no", f"--callgrind-out-file={out_file}", binary, "serve",
               f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn", *serve_args]
    daemon = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        bench.wait_up(url, timeout=300)
        for i in range(SCRAPES):
            bench.fetch(url, gzip=i % 2 == 1)
            time.sleep(2)
    finally:
        daemon.terminate()
        daemon.wait(timeout=300)


def instructions_by_function(profile, binary_name):
    """Self instructions of each function of the binary in a callgrind profile."""
    cost = collections.Counter()
    in_binary, function, skip_call_cost = False, None, False
    with open(profile, errors="replace") as f:
        for line in f:
            if line.startswith("ob="):
                in_binary = os.path.basename(line[3:].strip()) == binary_name
            elif line.startswith("fn="):
                function = RECURSION_SUFFIX.sub("", line[3:].strip()) if in_binary else None
                if function:
                    cost[function] += 0  # listed even if all its cost is in its callees
            elif CALLS_LINE.match(line):
                skip_call_cost = True  # the next line is the call's inclusive cost
            elif line[:1].isdigit() or line[:1] in "+-*":
                if skip_call_cost:
                    skip_call_cost = False
                elif function:
                    fields = line.split()
                    if len(fields) > 1:
                        cost[function] += int(fields[1])
    return cost


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("iowatch")
    ap.add_argument("--out", default=os.path.join(ROOT, "cmake", "serve_text_order.txt"))
    args = ap.parse_args()
    subprocess.run([os.path.join(ROOT, "scripts", "install-deps.sh"), "valgrind"], check=True)
    binary = os.path.abspath(args.iowatch)
    total = collections.Counter()
    with tempfile.TemporaryDirectory(prefix="iowatch-text-order-") as tmp:
        tree = os.path.join(tmp, "tree")
        runs = [bench.all_sources_tree(tree),
                [f"--config.file={os.path.join(ROOT, 'config', 'iowatch.yaml')}",
                 f"--state.dir={tmp}/host-state"]]
        for i, serve_args in enumerate(runs):
            profile = os.path.join(tmp, f"callgrind.{i}")
            record(binary, serve_args, profile)
            total.update(instructions_by_function(profile, os.path.basename(binary)))
    names = [n for n in total if not n.startswith("0x") and not n.startswith("(")]
    names.sort(key=lambda n: (-total[n], n))
    with open(args.out, "w") as f:
        f.write("# The functions `iowatch serve` runs, most instructions first: the linker lays\n"
                "# them out first (cmake/text_order.cmake). Written by scripts/text_order.py.\n")
        f.write("\n".join(names) + "\n")
    print(f"{args.out}: {len(names)} functions")


if __name__ == "__main__":
    main()
