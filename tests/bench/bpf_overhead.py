#!/usr/bin/python3
"""What the block-layer BPF collector costs the I/O it watches, side by side (root, BTF).

fio 4k random reads on a loop device over a file in /dev/shm (the highest IOPS this machine
reaches: every request costs CPU only, so a per-request cost shows at its largest), QD32
io_uring and QD1 psync, each run with the collector off and on, alternating, ROUNDS rounds.
`iowatch serve` runs throughout (so its sampling costs the same in both); SIGHUP with
collectors.bpf.enabled rewritten turns the program on and off between runs. Per run: fio's
IOPS, the whole machine's busy CPU time per request (/proc/stat, steal left out), and, with
the collector on, the program's own time per request from the kernel's BPF statistics
(kernel.bpf_stats_enabled: run_time_ns of the issue and completion programs / requests).
Beside them, in the same rounds on the same device, libbpf-tools' `biolatency -D` (Debian
libbpf-tools, CO-RE: one latency histogram per disk) with iowatch's collector off, measured the
same way: the yardstick for what a block-layer program costs per request.

Prints per job the median IOPS off and on and their ratio, the added CPU per request (median
busy ns on - off) and the program's ns per request. --check (CI's short run) fails when a run
with the collector on did not count its requests: neither IOPS nor times are bounded there, the
hypervisor's steal moving both by more than the collector's cost between two short runs; the
figures are docs/benchmarks.md's ("The BPF collector's cost"), from the long run.

--against OLD_IOWATCH adds another iowatch binary (an earlier commit's build) as a mode of its
own, its daemon beside the first, each turned on in turn: a change's cost against the program
it replaces, in the same rounds.

Usage: bpf_overhead.py IOWATCH [--rounds 5] [--seconds 10] [--check] [--no-biolatency]
                       [--against OLD_IOWATCH]
"""
import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import daemon  # noqa: E402

JOBS = {
    "QD32 io_uring": ["--ioengine=io_uring", "--iodepth=32"],
    "QD1 psync": ["--ioengine=psync", "--iodepth=1"],
}


def config(enabled):
    return ("probes:\n  enabled: false\ncgroups:\n  enabled: false\n"
            f"collectors:\n  bpf:\n    enabled: {'true' if enabled else 'false'}\n")


def busy_jiffies():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = v
    return user + nice + system + irq + softirq


IOWATCH_PROGRAMS = ("on_issue", "on_done", "on_complete")
# biolatency's programs as the kernel names them (BPF object names are cut at 15 bytes).
BIOLATENCY_PROGRAMS = ("block_rq_issue_", "block_rq_comple", "block_rq_insert")
BIOLATENCY = "/usr/sbin/biolatency"


def program_stats(names):
    """(run_time_ns, run_cnt) summed over the loaded programs whose name starts with one of
    `names`."""
    out = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, text=True,
                         check=True).stdout
    ns = cnt = 0
    for p in json.loads(out):
        if p.get("name", "").startswith(names):
            ns += p.get("run_time_ns", 0)
            cnt += p.get("run_cnt", 0)
    return ns, cnt


def loaded_programs():
    out = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, text=True,
                         check=True).stdout
    return [p.get("name", "") for p in json.loads(out)]


def start_biolatency():
    """biolatency -D, once its completion program is attached."""
    proc = subprocess.Popen([BIOLATENCY, "-D", "3600", "1"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not any(n.startswith("block_rq_comple") for n in loaded_programs()):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("biolatency did not load its programs")
        time.sleep(0.05)
    return proc


def fio(device, args, seconds):
    out = subprocess.run(
        ["fio", "--name=o", f"--filename={device}", "--rw=randread", "--bs=4k", "--direct=1",
         "--size=900M", "--time_based=1", f"--runtime={seconds}", "--norandommap=1",
         "--randrepeat=0", "--output-format=json", *args],
        check=True, capture_output=True, text=True).stdout
    read = json.loads(out[out.find("{"):])["jobs"][0]["read"]
    return read["iops"], read["total_ios"]


def set_collector(d, enabled):
    d.write_config(config(enabled))
    d.send(signal.SIGHUP)
    want = 1 if enabled else None

    def state(s):
        v = daemon.values(s, "iowatch_collector_success", collector="bpf")
        return (v[0] if v else None) == want
    held, _ = d.scrape_until(state, 15)
    if not held:
        raise RuntimeError(f"the collector did not turn {'on' if enabled else 'off'}")


def run(daemons, device, args, seconds, mode):
    """One fio run with `mode` watching: "off", "biolatency", or a key of `daemons` (whose
    collector alone is on)."""
    for name, d in daemons.items():
        set_collector(d, mode == name)
    tool = start_biolatency() if mode == "biolatency" else None
    names = BIOLATENCY_PROGRAMS if mode == "biolatency" else IOWATCH_PROGRAMS  # one loaded at once
    try:
        time.sleep(0.5)
        busy0, prog0 = busy_jiffies(), program_stats(names)
        iops, ios = fio(device, args, seconds)
        busy1, prog1 = busy_jiffies(), program_stats(names)
    finally:
        if tool:
            tool.kill()
            tool.wait()
    hz = os.sysconf("SC_CLK_TCK")
    return {"iops": iops, "ios": ios,
            "busy_ns": (busy1 - busy0) / hz * 1e9 / ios,
            "prog_ns": (prog1[0] - prog0[0]) / ios if mode != "off" else 0,
            "prog_runs": prog1[1] - prog0[1]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("iowatch")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--no-biolatency", action="store_true")
    ap.add_argument("--against")
    a = ap.parse_args()
    modes = ["off", "iowatch"] + (["against"] if a.against else [])
    if not a.no_biolatency:
        if not os.path.exists(BIOLATENCY):
            print(f"FAIL: {BIOLATENCY} is missing (Debian libbpf-tools; scripts/install-deps.sh)")
            return 1
        modes.append("biolatency")
    daemon.require_root("loading a BPF program and creating a loop device")
    daemon.require_btf()
    daemon.exit_on_sigterm()
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        stats_before = f.read().strip()
    work = tempfile.mkdtemp(prefix="iowatch-bpf-bench-", dir="/dev/shm")
    image = os.path.join(work, "image")
    with open(image, "wb") as f:
        for _ in range(1024):
            f.write(os.urandom(1 << 20))
    loop = subprocess.run(["losetup", "-f", "--show", image], check=True, capture_output=True,
                          text=True).stdout.strip()
    results = {job: {m: [] for m in modes} for job in JOBS}
    try:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write("1")
        with contextlib.ExitStack() as stack:
            daemons = {
                "iowatch": stack.enter_context(daemon.Daemon(a.iowatch, config=config(False)))}
            if a.against:
                daemons["against"] = stack.enter_context(
                    daemon.Daemon(a.against, config=config(False)))
            for round_ in range(a.rounds):
                for job, args in JOBS.items():
                    # Alternating: each mode first as often as last.
                    for mode in modes if round_ % 2 == 0 else modes[::-1]:
                        r = run(daemons, loop, args, a.seconds, mode)
                        results[job][mode].append(r)
                        print(f"round {round_ + 1} {job:14} {mode:10} "
                              f"{r['iops']:10.0f} IOPS  busy {r['busy_ns']:7.0f} ns/req  "
                              f"program {r['prog_ns']:5.0f} ns/req", flush=True)
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(stats_before)
        subprocess.run(["losetup", "-d", loop], check=False)
        subprocess.run(["rm", "-rf", work], check=False)
    failures = []
    print(f"\n{'job':14} {'watcher':10} {'IOPS':>10} {'/off':>6} {'added CPU ns/req':>17} "
          f"{'program ns/req':>15}")
    for job in JOBS:
        off = results[job]["off"]
        iops_off = statistics.median(r["iops"] for r in off)
        busy_off = statistics.median(r["busy_ns"] for r in off)
        for mode in modes:
            runs = results[job][mode]
            iops = statistics.median(r["iops"] for r in runs)
            added = statistics.median(r["busy_ns"] for r in runs) - busy_off
            prog = statistics.median(r["prog_ns"] for r in runs)
            print(f"{job:14} {mode:10} {iops:10.0f} {iops / iops_off:6.3f} {added:17.0f} "
                  f"{prog:15.0f}")
        # fio's count and the programs' runs have differed by a few in a million here
        # (2,073,806 requests, 4,147,593 runs), hence 99.95 %, not 100 %.
        on = results[job]["iowatch"]
        short = [(r["prog_runs"], r["ios"]) for r in on if r["prog_runs"] < 1.999 * r["ios"]]
        if short:
            failures.append(f"{job}: the programs ran on fewer requests than 99.95 % while on "
                            f"(runs, requests): {short}")
        # No time bound: one 2 s round on this VM lost 40 % of its IOPS to the hypervisor with
        # the same CPU per request on and off, and a stolen vCPU inside the program counts in
        # its own time too (5.5 µs a request seen in a 1 s round): the figures are printed.
    for f in failures:
        print(f"FAIL {f}")
    return 1 if a.check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
