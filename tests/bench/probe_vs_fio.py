#!/usr/bin/python3
"""Side by side: `iowatch probe` and fio 3.33 on the same file, alternating runs.

Six jobs: 4k randread QD32 io_uring, 4k randwrite QD1 psync, 1M sequential read
QD8 io_uring, 4k randread libaio at QD1 and QD32, and four clones of 4k randread libaio
QD8 with group_reporting (fio parity for job sets), all O_DIRECT on 256 MiB files (one per clone)
under --dir (default /var/tmp). iowatch lays the file out first (it never
writes to a file it did not create; fio then reuses it as it is), and each
round runs fio then iowatch with identical options. Reported per job: the
median over rounds of IOPS, bandwidth, clat p50/p99 and CPU per I/O (usr_cpu +
sys_cpu of the job, from each tool's own JSON, times its runtime, over its
I/Os), and the iowatch/fio ratios.

--uring-options fixedbufs,registerfiles gives those fio io_uring options (as
bare flags) to both tools on the io_uring jobs; without it both run with fio's
defaults (nothing registered).

Usage: probe_vs_fio.py IOWATCH [--rounds 3] [--runtime 5] [--dir /var/tmp] [--jobs A,B] [--control]
                       [--uring-options fixedbufs,registerfiles,sqthread_poll,hipri]
Run by hand (a benchmark, not a test); figures go to docs/benchmarks.md
("`iowatch probe` against fio 3.33").
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

JOBS = [
    ("randread-4k-qd32", ["--rw=randread", "--bs=4k", "--iodepth=32", "--ioengine=io_uring"], "read"),
    ("randwrite-4k-qd1", ["--rw=randwrite", "--bs=4k", "--iodepth=1", "--ioengine=psync"], "write"),
    ("seqread-1m-qd8", ["--rw=read", "--bs=1m", "--iodepth=8", "--ioengine=io_uring"], "read"),
    # libaio: the engine most published fio jobs use.
    ("libaio-randread-4k-qd1", ["--rw=randread", "--bs=4k", "--iodepth=1", "--ioengine=libaio"],
     "read"),
    ("libaio-randread-4k-qd32", ["--rw=randread", "--bs=4k", "--iodepth=32", "--ioengine=libaio"],
     "read"),
    # Four clones (processes, as fio's default), one group_reporting entry.
    ("libaio-randread-4k-qd8-numjobs4", ["--rw=randread", "--bs=4k", "--iodepth=8",
                                        "--ioengine=libaio", "--numjobs=4", "--group_reporting"],
     "read"),
]


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["jobs"][0]


def figures(job, op):
    d = job[op]
    # CPU percentages are over job_runtime: the clones' runtimes added, with group_reporting.
    cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] / 1000
    pct = d["clat_ns"]["percentile"]
    return {"iops": d["iops"], "bw_mib": d["bw_bytes"] / 2**20,
            "clat_p50_us": pct["50.000000"] / 1e3, "clat_p99_us": pct["99.000000"] / 1e3,
            "cpu_us_per_io": 1e6 * cpu_s / max(d["total_ios"], 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("iowatch")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--dir", default="/var/tmp")
    ap.add_argument("--jobs", default=",".join(j[0] for j in JOBS),
                    help="comma-separated job names (default: all)")
    ap.add_argument("--control", action="store_true",
                    help="also run fio a second time each round: fio-vs-fio ratios are the "
                         "noise floor the iowatch-vs-fio ratios must be read against")
    ap.add_argument("--uring-options", default="",
                    help="comma-separated fio io_uring flags for the io_uring jobs of both tools, "
                         "e.g. fixedbufs,registerfiles")
    args = ap.parse_args()
    wanted = args.jobs.split(",")
    uring_flags = [f"--{o}" for o in args.uring_options.split(",") if o]
    tools = ["fio", "iowatch"] + ["fio again"] * args.control
    workdir = tempfile.mkdtemp(prefix="iowatch-bench-", dir=args.dir)
    common = [f"--directory={workdir}", "--name=bench", "--size=256M", "--direct=1",
              f"--runtime={args.runtime}", "--time_based", "--output-format=json"]
    try:
        # Lay the files out once with iowatch (bench.0.0 for the single jobs, bench.0-3.0 for
        # the clones; fio would refuse nothing, iowatch would refuse to write to fio's files).
        subprocess.run([args.iowatch, "probe", *common, "--rw=read", "--bs=1m", "--runtime=1",
                        "--numjobs=4"], capture_output=True, check=True)
        print(f"{args.rounds} rounds of {args.runtime} s per tool and job, alternating "
              f"{' / '.join(tools)}; io_uring options: {' '.join(uring_flags) or 'none'}")
        print("| job | tool | IOPS | MiB/s | clat p50 µs | clat p99 µs | CPU µs/I/O |")
        print("|---|---|---|---|---|---|---|")
        for name, opts, op in (j for j in JOBS if j[0] in wanted):
            if "--ioengine=io_uring" in opts:
                opts = [*opts, *uring_flags]
            rows = {tool: [] for tool in tools}
            for _ in range(args.rounds):
                for tool in tools:
                    cmd = [args.iowatch, "probe"] if tool == "iowatch" else ["fio"]
                    rows[tool].append(figures(run([*cmd, *common, *opts]), op))
            med = {tool: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
                   for tool, rs in rows.items()}
            for tool in tools:
                m = med[tool]
                print(f"| {name} | {tool} | {m['iops']:.0f} | {m['bw_mib']:.1f} | "
                      f"{m['clat_p50_us']:.1f} | {m['clat_p99_us']:.1f} | {m['cpu_us_per_io']:.2f} |")
            for tool in tools[1:]:
                r = {k: med[tool][k] / med["fio"][k] if med["fio"][k] else float("nan")
                     for k in med["fio"]}
                print(f"| {name} | ratio {tool} / fio | {r['iops']:.2f} | {r['bw_mib']:.2f} | "
                      f"{r['clat_p50_us']:.2f} | {r['clat_p99_us']:.2f} | {r['cpu_us_per_io']:.2f} |")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
