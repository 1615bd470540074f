#!/usr/bin/python3
"""`iowatch trace` and libiowatch-trace.so, on trace_workload (trace_workload.cc).

1. The issue's workload, 100 writes of 100 KB, fsync, read forward, read backward: the JSON
   counts every call and byte exactly (write 100 / 10,240,000 bytes, read 200, seek 100,
   fsync 1, open 2, close 2), classifies the writes sequential and the reads 100 sequential,
   99 backward, 1 random (the first backward read re-reads the last block), puts the 200
   reads in the [64K, 128K) bucket, through __read_chk (the workload is fortified); the text
   report has MIO's "Trace close : program <-> os : FILE : (BYTES/SECONDS)" line.
2. Four threads on one descriptor, 500 pwrites and 500 preads of 4 KiB each: 2000 and 2000.
3. A forked child reading through dup(): two reports, each with its own process's calls.
4. The library alone: LD_PRELOAD with IOWATCH_TRACE_OUTPUT appends a JSON line,
   IOWATCH_TRACE_REPORT the text; with neither it writes nothing (never on the program's
   standard error). The command's exit status is passed on.
5. --what-if on the workload at 300 x 100 KB: four steps in the order the program used them,
   each replayed as traced and with 2 MiB direct requests, a positive ratio, the program's
   file untouched (same bytes and mtime) and no scratch directory left.
6. Errors: no command, a command that does not exist: exit 2 and a message naming it.
7. Overhead smoke check: a 4 KiB read loop under the library costs less than 1.5x the loop
   alone (the benchmark's figure, 5 % or less, is in docs/benchmarks.md, "The trace library's
   cost"; timing has no place in CI).

Usage: trace.py IOWATCH TRACE_WORKLOAD LIBRARY
"""
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import daemon
from trace_common import file_of, run, trace_json


def check_shape(r, iowatch, workload, workdir):
    data = os.path.join(workdir, "shape.dat")
    p, doc = trace_json(iowatch, workdir, [workload, "shape", data, "102400", "100"])
    r.check(p.returncode == 0, "shape: exit 0", p.stderr)
    r.check(len(doc["processes"]) == 1, "shape: one process")
    f = file_of(doc["processes"][0], data)
    r.check(f is not None, "shape: the file is traced", json.dumps(doc)[:2000])
    if f is None:
        return
    c = f["calls"]
    expected = {
        ("write", "calls"): 100, ("write", "bytes"): 10240000, ("write", "requested_bytes"): 10240000,
        ("write", "min_request"): 102400, ("write", "max_request"): 102400,
        ("read", "calls"): 200, ("read", "bytes"): 20480000, ("read", "errors"): 0,
        ("seek", "calls"): 100, ("fsync", "calls"): 1, ("open", "calls"): 2, ("close", "calls"): 2,
    }
    for (call, key), value in expected.items():
        r.check(c[call][key] == value, f"shape: {call} {key} = {value}", str(c[call]))
    r.check(f["write"]["pattern"] == "sequential" and f["write"]["sequential"]["requests"] == 100,
            "shape: writes sequential", str(f["write"]))
    reads = f["read"]
    r.check((reads["sequential"]["requests"], reads["backward"]["requests"],
             reads["random"]["requests"]) == (100, 99, 1),
            "shape: reads 100 sequential, 99 backward, 1 random", str(reads))
    r.check(reads["request_sizes"] == [[65536, 200]], "shape: 200 reads in [64K, 128K)",
            str(reads["request_sizes"]))
    r.check(f["size"] == 10240000 and f["max_extent"] == 10240000, "shape: size and extent")
    r.check(c["read"]["ns"] > 0 and c["write"]["ns"] > 0, "shape: call times measured")
    text = run([iowatch, "trace", "--", workload, "shape", data, "102400", "100"]).stderr
    r.check(f"Trace close : program <-> os : {data} : (30720000/" in text,
            "shape: the MIO-style line", text[:1500])
    r.check("read  pattern: mixed (100 sequential, 99 backward, 1 random)" in text,
            "shape: the pattern line", text[:1500])


def check_threads_and_fork(r, iowatch, workload, workdir):
    data = os.path.join(workdir, "threads.dat")
    p, doc = trace_json(iowatch, workdir, [workload, "threads", data, "4", "500"])
    f = file_of(doc["processes"][0], data) if doc["processes"] else None
    r.check(p.returncode == 0 and f is not None, "threads: traced", p.stderr)
    if f:
        r.check(f["calls"]["write"]["calls"] == 2000 and f["calls"]["read"]["calls"] == 2000,
                "threads: 2000 pwrites and 2000 preads from 4 threads", str(f["calls"]))
        r.check(f["calls"]["write"]["bytes"] == 2000 * 4096, "threads: bytes exact")
    data = os.path.join(workdir, "fork.dat")
    p, doc = trace_json(iowatch, workdir, [workload, "fork", data])
    procs = doc["processes"]
    r.check(p.returncode == 0 and len(procs) == 2, "fork: a report per process",
            f"{p.stderr} {len(procs)}")
    if len(procs) == 2:
        by_pid = {x["pid"]: x for x in procs}
        child = next(x for x in procs if x["parent_pid"] in by_pid)
        parent = by_pid[child["parent_pid"]]
        pf, cf = file_of(parent, data), file_of(child, data)
        r.check(pf is not None and pf["calls"]["write"]["calls"] == 10
                and pf["calls"]["read"]["calls"] == 0, "fork: the parent's 10 writes, no reads",
                str(pf and pf["calls"]))
        r.check(cf is not None and cf["calls"]["read"]["calls"] == 5
                and cf["calls"]["read"]["bytes"] == 10000 and cf["calls"]["write"]["calls"] == 0,
                "fork: the child's 5 reads through dup(), no writes", str(cf and cf["calls"]))


def check_library_alone(r, workload, library, workdir):
    data = os.path.join(workdir, "alone.dat")
    lines = os.path.join(workdir, "lines.json")
    env = dict(os.environ, LD_PRELOAD=library, IOWATCH_TRACE_OUTPUT=lines)
    p = run([workload, "shape", data, "4096", "3"], env=env)
    with open(lines) as f:
        records = [json.loads(line) for line in f if line.strip()]
    r.check(p.returncode == 0 and len(records) == 1 and records[0]["iowatch_trace"] == 1,
            "alone: one JSON line", p.stderr)
    env = dict(os.environ, LD_PRELOAD=library)
    env.pop("IOWATCH_TRACE_OUTPUT", None)
    p = run([workload, "shape", data, "4096", "3"], env=env)
    r.check(p.returncode == 0 and p.stderr == "", "alone, no variable: nothing written",
            p.stderr[:500])
    text = os.path.join(workdir, "report.txt")
    p = run([workload, "shape", data, "4096", "3"], env=dict(env, IOWATCH_TRACE_REPORT=text))
    with open(text) as f:
        report = f.read()
    r.check("Trace close : program <-> os : " + data in report, "alone: the text in "
            "IOWATCH_TRACE_REPORT", report[:500])
    p = run([workload, "nonsense"], env=env)
    r.check(p.returncode == 2, "alone: the program's exit status is its own")


def check_what_if(r, iowatch, workload, workdir):
    data = os.path.join(workdir, "whatif.dat")
    subprocess.run([workload, "shape", data, "102400", "300"], check=True)
    digest = hashlib.sha256(open(data, "rb").read()).hexdigest()
    mtime = os.stat(data).st_mtime_ns
    # The command only reads: the file's bytes and mtime must survive the replays beside it.
    p, doc = trace_json(iowatch, workdir, ["cat", data], extra=["--what-if"])
    r.check(p.returncode == 0, "what-if: exit 0", p.stderr)
    files = doc.get("what_if", {}).get("files", [])
    f = next((x for x in files if x["path"] == data), None)
    r.check(f is not None and not f.get("skipped"), "what-if: the file replayed", str(files)[:1500])
    if f:
        r.check([(s["direction"], s["pattern"]) for s in f["steps"]] == [("read", "sequential")],
                "what-if: cat's one step", str(f["steps"]))
        r.check(f["ratio"] > 0 and all(s["larger"]["seconds"] > 0 for s in f["steps"]),
                "what-if: a ratio", str(f)[:500])
        r.check("bs=2m" in f["steps"][0]["larger"]["job"] and "direct=1" in f["steps"][0]["larger"]["job"],
                "what-if: 2 MiB direct", f["steps"][0]["larger"]["job"])
    # The shape itself: four steps in the order of first use.
    data2 = os.path.join(workdir, "whatif2.dat")
    p, doc = trace_json(iowatch, workdir, [workload, "shape", data2, "102400", "300"],
                        extra=["--what-if"])
    f = next((x for x in doc.get("what_if", {}).get("files", []) if x["path"] == data2), None)
    steps = [(s["direction"], s["pattern"]) for s in f["steps"]] if f else []
    r.check(steps == [("write", "sequential"), ("read", "sequential"), ("read", "random"),
                      ("read", "backward")], "what-if: the shape's four steps in order", str(steps))
    if f:
        print(f"what-if of the 30 MB shape: as traced {f['as_traced_seconds']:.3f} s, "
              f"2 MiB async direct {f['larger_seconds']:.3f} s, ratio {f['ratio']:.2f}")
    r.check(hashlib.sha256(open(data, "rb").read()).hexdigest() == digest
            and os.stat(data).st_mtime_ns == mtime, "what-if: the traced file untouched")
    left = glob.glob(os.path.join(workdir, ".iowatch-what-if.*"))
    r.check(not left, "what-if: no scratch directory left", str(left))


def check_errors(r, iowatch):
    p = run([iowatch, "trace"])
    r.check(p.returncode == 2 and "expected a command to trace" in p.stderr, "no command: exit 2",
            p.stderr)
    p = run([iowatch, "trace", "--", "/nonexistent/program"])
    r.check(p.returncode == 2 and "/nonexistent/program: cannot run the command: No such file"
            in p.stderr, "a missing command: exit 2, named", p.stderr)
    p = run([iowatch, "trace", "--", "sh", "-c", "exit 7"])
    r.check(p.returncode == 7, "the command's exit status is passed on", str(p.returncode))


def check_overhead(r, workload, library, workdir):
    data = os.path.join(workdir, "loop.dat")
    env = dict(os.environ, LD_PRELOAD=library, IOWATCH_TRACE_OUTPUT=os.path.join(workdir, "l.json"))
    plain, traced = [], []
    for _ in range(3):
        plain.append(float(run([workload, "loop", data, "200000"]).stdout))
        traced.append(float(run([workload, "loop", data, "200000"], env=env).stdout))
    ratio = min(traced) / min(plain)
    print(f"4 KiB read loop: {min(plain):.0f} ns alone, {min(traced):.0f} ns traced ({ratio:.3f}x)")
    r.check(ratio < 1.5, "overhead smoke check: under 1.5x", f"{ratio:.3f}")


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    iowatch, workload, library = sys.argv[1:]
    r = daemon.Results()
    workdir = tempfile.mkdtemp(prefix="iowatch-e2e-trace-", dir="/var/tmp")
    try:
        check_shape(r, iowatch, workload, workdir)
        check_threads_and_fork(r, iowatch, workload, workdir)
        check_library_alone(r, workload, library, workdir)
        check_what_if(r, iowatch, workload, workdir)
        check_errors(r, iowatch)
        check_overhead(r, workload, library, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
