#!/usr/bin/python3
"""`iowatch probe` against the real fio 3.33 on a small file on this disk.

For each engine (io_uring, libaio, psync) and pattern (read, randread, randwrite,
randrw) both tools run the same job for about a second on a few MiB in a
temp directory under /var/tmp (the ext4 root): iowatch's JSON must parse,
carry fio's field names and number types for everything we measure, be
self-consistent (I/Os × bs = bytes, IOPS × runtime ≈ I/Os, N = I/Os,
percentiles ordered and within min/max, lat ≈ slat + clat) and its IOPS be
in the same league as fio's (within ×3: a smoke bound, not a benchmark).
Then job sets: a job file with [global], ${ENV}, numjobs, stonewall, new_group and
group_reporting, and numjobs=4 on the command line, against fio's jobs[] and files.
Then fio's io_uring flags (fixedbufs, registerfiles): accepted by both, refused
by both with psync, and with buffer registration refused (a 64 KiB
RLIMIT_MEMLOCK) fio fails while iowatch reports a fallback; hipri on a disk
without poll queues fails in both. Then the safety rules: O_DIRECT on tmpfs, a foreign file, a block device
(loop, root only), a bad option, and SIGINT mid-run (partial results, exit
130 within 2 s). Everything created is removed.

Usage: probe_vs_fio.py IOWATCH_BINARY
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import daemon
from serve_hotplug import loop_device

ASYNC = ("io_uring", "libaio")  # engines with submission latency and real queue depth

BS = 4096
SIZE = "8M"


def run_json(cmd, timeout=60):
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    try:
        return run.returncode, json.loads(run.stdout), run.stderr
    except json.JSONDecodeError:
        return run.returncode, None, run.stdout + run.stderr


def job_args(workdir, engine, rw, extra=()):
    return [f"--name=probe", f"--directory={workdir}", f"--rw={rw}", f"--bs={BS}", f"--size={SIZE}",
            f"--ioengine={engine}", "--iodepth=8" if engine in ASYNC else "--iodepth=1",
            "--direct=1", "--runtime=1", "--time_based", *extra]


def key_types(obj, prefix=""):
    """{path: type name} for every leaf, with percentile keys kept."""
    out = {}
    for k, v in obj.items():
        path = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            out.update(key_types(v, path))
        else:
            out[path] = "float" if isinstance(v, float) else type(v).__name__
    return out


MEASURED = ("io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime", "total_ios", "short_ios",
            "drop_ios", "slat_ns", "clat_ns", "lat_ns")


def check_consistency(r, tag, job, direction, async_engine):
    d = job[direction]
    n = d["total_ios"]
    r.check(n > 0, f"{tag}: {direction} did I/O", f"total_ios={n}")
    if n == 0:
        return
    r.check(d["short_ios"] > 0 or d["io_bytes"] == n * BS, f"{tag}: {direction} bytes = I/Os x bs",
            f"io_bytes={d['io_bytes']} ios={n}")
    expected = d["iops"] * d["runtime"] / 1000
    r.check(abs(expected - n) <= 0.01 * n + 1, f"{tag}: {direction} IOPS x runtime = I/Os",
            f"iops={d['iops']} runtime={d['runtime']} ios={n}")
    r.check(d["bw"] == d["bw_bytes"] // 1024, f"{tag}: {direction} bw is bw_bytes in KiB")
    for lat in ("clat_ns", "lat_ns"):
        r.check(d[lat]["N"] == n, f"{tag}: {direction} {lat}.N = I/Os", f"N={d[lat]['N']} ios={n}")
    clat = d["clat_ns"]
    values = [clat["percentile"][k] for k in sorted(clat["percentile"], key=float)]
    r.check(values == sorted(values), f"{tag}: {direction} percentiles ordered", str(values))
    slack = 1 + 1 / 128
    r.check(clat["min"] / slack <= values[0] and values[-1] <= clat["max"] * slack,
            f"{tag}: {direction} percentiles within min..max",
            f"min={clat['min']} max={clat['max']} p={values}")
    r.check(clat["min"] <= clat["mean"] <= clat["max"], f"{tag}: {direction} clat mean in range")
    if async_engine:
        r.check(d["slat_ns"]["N"] == n, f"{tag}: {direction} slat recorded for async engine")
        total = d["slat_ns"]["mean"] + clat["mean"]
        r.check(abs(total - d["lat_ns"]["mean"]) <= 0.01 * d["lat_ns"]["mean"] + 100,
                f"{tag}: {direction} lat mean = slat + clat means",
                f"slat+clat={total} lat={d['lat_ns']['mean']}")
    else:
        r.check(d["slat_ns"]["N"] == 0, f"{tag}: {direction} no slat for a sync engine")


def check_disk_util(r, tag, ours, theirs, job):
    """fio's disk_util: the same names and types; the disk saw at least the job's I/Os (its
    counters run over the whole measured run; fio's from its 250 ms sampling thread)."""
    if not theirs.get("disk_util"):
        return
    du = ours.get("disk_util") or [{}]
    r.check(key_types(du[0]) == key_types(theirs["disk_util"][0]),
            f"{tag}: disk_util named and typed as fio's", f"{du[0]} vs {theirs['disk_util'][0]}")
    for d in ("read", "write"):  # a merged I/O is counted in merges, not in ios
        ios, seen = job[d]["total_ios"], du[0].get(f"{d}_ios", 0) + du[0].get(f"{d}_merges", 0)
        r.check(seen >= 0.99 * ios,
                f"{tag}: disk_util {d}_ios + {d}_merges {seen} >= the job's {ios} I/Os")


def compare_with_fio(r, binary, workdir):
    for engine in ("io_uring", "libaio", "psync"):
        for rw in ("read", "randread", "randwrite", "randrw"):
            tag = f"{engine} {rw}"
            rc, ours, err = run_json([binary, "probe", *job_args(workdir, engine, rw),
                                      "--output-format=json"])
            if not r.check(rc == 0 and ours is not None, f"{tag}: iowatch probe ran, JSON parses",
                           f"exit {rc}: {err[:1500]}"):
                continue
            fio_dir = os.path.join(workdir, "fio")
            os.makedirs(fio_dir, exist_ok=True)
            rc, theirs, err = run_json(["fio", *job_args(fio_dir, engine, rw), "--output-format=json"])
            if not r.check(rc == 0 and theirs is not None, f"{tag}: fio ran", err[:1500]):
                continue
            job, fjob = ours["jobs"][0], theirs["jobs"][0]
            for key in ("jobname", "job options", "usr_cpu", "sys_cpu", "ctx", "read", "write"):
                r.check(key in job, f"{tag}: job has {key!r}")
            ours_t, fio_t = key_types(job), key_types(fjob)
            directions = [d for d in ("read", "write") if fjob[d]["total_ios"] > 0]
            for d in ("read", "write"):
                for field in MEASURED:
                    paths = [p for p in fio_t if p == f"{d}.{field}" or p.startswith(f"{d}.{field}.")]
                    # Percentiles exist only for a direction that did I/O.
                    missing = [p for p in paths if p not in ours_t and
                               not (".percentile." in p and d not in directions)]
                    wrong = [p for p in paths if p in ours_t and ours_t[p] != fio_t[p]]
                    r.check(not missing and not wrong, f"{tag}: {d}.{field} named and typed as fio's",
                            f"missing={missing[:5]} wrong type={[(p, ours_t[p], fio_t[p]) for p in wrong[:5]]}")
            for key in ("usr_cpu", "sys_cpu", "ctx"):
                r.check(ours_t.get(key) == fio_t.get(key), f"{tag}: {key} typed as fio's")
            for d in directions:
                check_consistency(r, tag, job, d, engine in ASYNC)
                ratio = job[d]["iops"] / max(fjob[d]["iops"], 1e-9)
                print(f"     {tag} {d}: iowatch {job[d]['iops']:.0f} IOPS, fio {fjob[d]['iops']:.0f} "
                      f"IOPS (ratio {ratio:.2f})")
                r.check(1 / 3 <= ratio <= 3, f"{tag}: {d} IOPS within x3 of fio's", f"ratio {ratio:.2f}")
            check_disk_util(r, tag, ours, theirs, job)
            shutil.rmtree(fio_dir, ignore_errors=True)


JOB_FILE = """; a job file as published ones look: [global], clones, stonewall, new_group
[global]
directory=${PROBE_DIR}
size=4M
bs=4k
direct=1
ioengine=libaio
iodepth=4
runtime=1
time_based

[rand]
rw=randread
numjobs=2

[seq]
stonewall
rw=read
numjobs=2
group_reporting

[writer]
new_group
rw=randwrite
"""


def check_job_sets(r, binary, workdir):
    """numjobs, group_reporting, stonewall and new_group, from a job file (with ${ENV}) and from
    the command line: the same jobs[] entries as fio (names, groups, options), the same files,
    the grouped entry's arithmetic as fio's (runtime the longest, job_runtime the sum), IOPS
    in fio's league, and "Run status group N" in the summary."""
    job_file = os.path.join(workdir, "set.fio")
    with open(job_file, "w") as f:
        f.write(JOB_FILE)
    reports, files = {}, {}
    for tool, cmd in (("iowatch", [binary, "probe", job_file]), ("fio", ["fio", job_file])):
        tool_dir = os.path.join(workdir, f"set-{tool}")
        os.makedirs(tool_dir)
        env = dict(os.environ, PROBE_DIR=tool_dir)
        run = subprocess.run([*cmd, "--output-format=json"], capture_output=True, text=True,
                             timeout=120, env=env)
        try:
            reports[tool] = json.loads(run.stdout)
        except json.JSONDecodeError:
            reports[tool] = None
        r.check(run.returncode == 0 and reports[tool] is not None, f"job file: {tool} ran",
                f"exit {run.returncode}: {(run.stdout + run.stderr)[-800:]}")
        files[tool] = sorted(os.listdir(tool_dir))
        text = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env).stdout
        for group in range(3):
            r.check(f"Run status group {group} (all jobs):" in text,
                    f"job file: {tool}'s summary has run status group {group}", text[-1500:])
        shutil.rmtree(tool_dir, ignore_errors=True)
    if not reports["iowatch"] or not reports["fio"]:
        return
    r.check(files["iowatch"] == files["fio"], "job file: the same files as fio's",
            f"{files['iowatch']} vs {files['fio']}")
    ours, theirs = reports["iowatch"]["jobs"], reports["fio"]["jobs"]
    shape = lambda jobs: [(j["jobname"], j["groupid"], sorted(j["job options"])) for j in jobs]
    r.check(shape(ours) == shape(theirs), "job file: jobs[] entries, groups and options as fio's",
            f"{shape(ours)} vs {shape(theirs)}")
    options = {tool: dict(reports[tool].get("global options", {}), directory="")
               for tool in reports}  # each tool ran in a directory of its own
    r.check(options["iowatch"] == options["fio"], "job file: global options as fio's",
            f"{options['iowatch']} vs {options['fio']}")
    for job, fjob in zip(ours, theirs):
        tag = f"job file {job['jobname']} (group {job['groupid']})"
        d = "write" if job["jobname"] == "writer" else "read"
        check_consistency(r, tag, job, d, True)
        ratio = job[d]["iops"] / max(fjob[d]["iops"], 1e-9)
        print(f"     {tag} {d}: iowatch {job[d]['iops']:.0f} IOPS, fio {fjob[d]['iops']:.0f} IOPS "
              f"(ratio {ratio:.2f}), job_runtime {job['job_runtime']} vs {fjob['job_runtime']} ms")
        r.check(1 / 3 <= ratio <= 3, f"{tag}: IOPS within x3 of fio's", f"ratio {ratio:.2f}")
        r.check(abs(job["job_runtime"] - fjob["job_runtime"]) <= 0.25 * fjob["job_runtime"] + 50,
                f"{tag}: job_runtime as fio's (the clones' sum when grouped)",
                f"{job['job_runtime']} vs {fjob['job_runtime']}")
    grouped = [j for j in ours if j["jobname"] == "seq"]
    if grouped:
        j = grouped[0]
        r.check(j["job_runtime"] >= 1.8 * j["read"]["runtime"],
                "job file: the grouped entry's runtime is the longest, job_runtime the sum",
                f"runtime {j['read']['runtime']} job_runtime {j['job_runtime']}")

    # The command line: options before the first --name for every job, clones as threads.
    args = ["--directory=" + workdir, "--size=4M", "--direct=1", "--runtime=1", "--time_based",
            "--name=four", "--rw=randread", "--numjobs=4", "--thread", "--group_reporting"]
    rc, ours, err = run_json([binary, "probe", *args, "--output-format=json"])
    rc_fio, theirs, err_fio = run_json(["fio", *args, "--output-format=json"])
    if r.check(rc == 0 and ours and rc_fio == 0 and theirs, "numjobs=4 --thread: both ran",
               f"{err[-500:]} {err_fio[-500:]}"):
        r.check(len(ours["jobs"]) == len(theirs["jobs"]) == 1,
                "numjobs=4 group_reporting: one entry, as fio", f"{len(ours['jobs'])}")
        j, fj = ours["jobs"][0], theirs["jobs"][0]
        check_consistency(r, "numjobs=4", j, "read", False)
        ratio = j["read"]["iops"] / max(fj["read"]["iops"], 1e-9)
        print(f"     numjobs=4 psync randread: iowatch {j['read']['iops']:.0f} IOPS, fio "
              f"{fj['read']['iops']:.0f} IOPS (ratio {ratio:.2f})")
        r.check(1 / 3 <= ratio <= 3, "numjobs=4: IOPS within x3 of fio's", f"ratio {ratio:.2f}")
    for n in range(4):
        os.unlink(os.path.join(workdir, f"four.{n}.0"))


def check_uring_options(r, binary, workdir):
    """fio's io_uring flags: taken by both tools, refused by both with psync, and where buffer
    registration is refused (64 KiB RLIMIT_MEMLOCK, no CAP_IPC_LOCK) fio fails the job while
    iowatch measures on and reports the fallback."""
    flags = ["--fixedbufs", "--registerfiles"]
    rc, ours, err = run_json([binary, "probe", *job_args(workdir, "io_uring", "randread", flags),
                              "--output-format=json"])
    r.check(rc == 0 and ours is not None and ours["jobs"][0]["iowatch"]["fallbacks"] == [],
            "io_uring --fixedbufs --registerfiles: iowatch runs as asked, no fallback",
            f"exit {rc}: {err[:500]}")
    fio_dir = os.path.join(workdir, "fio-uring")
    os.makedirs(fio_dir, exist_ok=True)
    rc, theirs, err = run_json(["fio", *job_args(fio_dir, "io_uring", "randread", flags),
                                "--output-format=json"])
    r.check(rc == 0 and theirs is not None, "io_uring --fixedbufs --registerfiles: fio runs",
            err[:500])
    shutil.rmtree(fio_dir, ignore_errors=True)

    run = subprocess.run([binary, "probe", *job_args(workdir, "psync", "randread", ["--fixedbufs"])],
                         capture_output=True, text=True, timeout=30)
    r.check(run.returncode == 2 and "fixedbufs: an option of ioengine=io_uring" in run.stderr,
            "psync --fixedbufs: refused naming the option and the engine", run.stderr)
    run = subprocess.run(["fio", *job_args(workdir, "psync", "randread", ["--fixedbufs"])],
                         capture_output=True, text=True, timeout=30)
    r.check(run.returncode != 0 and "unrecognized option" in run.stderr,
            "psync --fixedbufs: fio refuses it too", run.stderr[:300])

    limited = ["prlimit", "--memlock=65536"]
    if os.geteuid() == 0:  # root's CAP_IPC_LOCK would let it pin anything
        limited += ["setpriv", "--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock"]
    big = ["--bs=1m", "--iodepth=4"]
    rc, ours, err = run_json([*limited, binary, "probe",
                              *job_args(workdir, "io_uring", "randread", flags), *big,
                              "--output-format=json"])
    fallbacks = ours["jobs"][0]["iowatch"]["fallbacks"] if ours else None
    r.check(rc == 0 and fallbacks and fallbacks[0]["name"] == "fixedbufs" and
            "RLIMIT_MEMLOCK" in fallbacks[0]["reason"] and ours["jobs"][0]["read"]["total_ios"] > 0,
            "fixedbufs over RLIMIT_MEMLOCK: iowatch measures on and reports the fallback",
            f"exit {rc}: {err[:500]} fallbacks={fallbacks}")
    run = subprocess.run([*limited, binary, "probe",
                          *job_args(workdir, "io_uring", "randread", flags), *big],
                         capture_output=True, text=True, timeout=60)
    r.check(run.returncode == 0 and "\n  fallback: fixedbufs: " in run.stdout,
            "fixedbufs over RLIMIT_MEMLOCK: the summary has a fallback line", run.stdout[-500:])
    target = os.path.join(workdir, "probe.0.0")
    run = subprocess.run([*limited, "fio", "--name=probe", f"--filename={target}", "--rw=randread",
                          "--ioengine=io_uring", "--direct=1", "--size=8M", "--runtime=1", *flags,
                          *big], capture_output=True, text=True, timeout=60)
    r.check(run.returncode != 0 and "Cannot allocate memory" in run.stdout + run.stderr,
            "fixedbufs over RLIMIT_MEMLOCK: fio 3.33 fails the job instead",
            f"exit {run.returncode}: {(run.stdout + run.stderr)[-300:]}")


def device_polls(path):
    """The io_poll setting of the disk holding `path` (None when unknown)."""
    dev = os.stat(path).st_dev
    block = f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}"
    for queue in (f"{block}/queue/io_poll", f"{block}/../queue/io_poll"):
        try:
            with open(queue) as f:
                return f.read().strip() != "0"
        except OSError:
            continue
    return None


def check_hipri(r, binary, workdir):
    """hipri on a disk without poll queues: both tools fail the run with EOPNOTSUPP; iowatch's
    error says why."""
    if device_polls(workdir) is not False:
        print("     (hipri check needs a disk without poll queues; skipped)")
        return
    run = subprocess.run([binary, "probe", *job_args(workdir, "io_uring", "randread", ["--hipri"])],
                         capture_output=True, text=True, timeout=60)
    r.check(run.returncode == 1 and "Operation not supported" in run.stderr and
            "needs a device with poll queues" in run.stderr,
            "hipri without poll queues: the run fails with EOPNOTSUPP and a hint", run.stderr[-400:])
    run = subprocess.run(["fio", "--name=probe", f"--filename={os.path.join(workdir, 'probe.0.0')}",
                          "--rw=randread", "--ioengine=io_uring", "--direct=1", "--size=8M",
                          "--runtime=1", "--hipri"], capture_output=True, text=True, timeout=60)
    r.check(run.returncode != 0 and "Operation not supported" in run.stdout + run.stderr,
            "hipri without poll queues: fio 3.33 fails the same way",
            f"exit {run.returncode}: {(run.stdout + run.stderr)[-300:]}")


def check_safety(r, binary, workdir):
    # O_DIRECT on tmpfs.
    shm = tempfile.mkdtemp(dir="/dev/shm") if os.path.isdir("/dev/shm") else None
    if shm:
        try:
            run = subprocess.run([binary, "probe", *job_args(shm, "psync", "randread")],
                                 capture_output=True, text=True, timeout=60)
            r.check(run.returncode == 2 and "--direct=0" in run.stderr and shm in run.stderr,
                    "tmpfs with direct=1: clear error naming the path and --direct=0",
                    f"exit {run.returncode}: {run.stderr}")
            r.check(not os.listdir(shm), "tmpfs: nothing left behind", str(os.listdir(shm)))
            args = [a if a != "--direct=1" else "--direct=0" for a in job_args(shm, "psync", "randread")]
            run = subprocess.run([binary, "probe", *args], capture_output=True, text=True, timeout=60)
            r.check(run.returncode == 0, "tmpfs with direct=0 runs", run.stderr)
        finally:
            shutil.rmtree(shm, ignore_errors=True)

    # A file iowatch did not create is never written.
    foreign = os.path.join(workdir, "foreign.dat")
    payload = os.urandom(1 << 20)
    with open(foreign, "wb") as f:
        f.write(payload)
    run = subprocess.run([binary, "probe", "--name=f", f"--filename={foreign}", "--rw=randwrite",
                          "--bs=4k", "--size=1M", "--ioengine=psync", "--runtime=1"],
                         capture_output=True, text=True, timeout=60)
    with open(foreign, "rb") as f:
        unchanged = f.read() == payload
    r.check(run.returncode == 2 and "--destructive" in run.stderr and unchanged,
            "a foreign file is not written without --destructive", f"exit {run.returncode}: {run.stderr}")
    run = subprocess.run([binary, "probe", "--name=f", f"--filename={foreign}", "--rw=randread",
                          "--bs=4k", "--size=1M", "--ioengine=psync", "--runtime=1"],
                         capture_output=True, text=True, timeout=60)
    r.check(run.returncode == 0, "a foreign file may be read", run.stderr)

    # Bad option values name the option.
    run = subprocess.run([binary, "probe", "--name=x", f"--directory={workdir}", "--size=1M",
                          "--bs=4q"], capture_output=True, text=True, timeout=30)
    r.check(run.returncode == 2 and "bs" in run.stderr and "4q" in run.stderr,
            "bad bs: exit 2 naming the option and value", run.stderr)

    # SIGINT mid-run: partial results, exit 130, promptly.
    proc = subprocess.Popen([binary, "probe", "--name=long", f"--directory={workdir}", "--size=8M",
                             "--rw=randread", "--bs=4k", "--ioengine=io_uring", "--iodepth=4",
                             "--direct=1", "--runtime=60", "--time_based", "--output-format=json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
        took = time.monotonic() - sent
        data = json.loads(out) if out.strip().startswith("{") else None
        ok = (proc.returncode == 130 and data is not None and took < 2.0 and
              data["jobs"][0]["read"]["total_ios"] > 0 and
              data["jobs"][0]["iowatch"]["end"] == "interrupted")
        r.check(ok, "SIGINT: partial results, exit 130 within 2 s",
                f"exit {proc.returncode} after {took:.2f} s: {err[:500]} {out[:300]}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def check_block_device(r, binary, workdir):
    if os.geteuid() != 0 or shutil.which("losetup") is None:
        print("     (block-device checks need root and losetup; skipped)")
        return
    with loop_device(os.path.join(workdir, "loop.img"), 16 << 20) as dev:
        base = [binary, "probe", "--name=b", f"--filename={dev}", "--bs=4k", "--size=4M",
                "--ioengine=psync", "--runtime=1"]
        run = subprocess.run(base + ["--rw=randread"], capture_output=True, text=True, timeout=60)
        r.check(run.returncode == 2 and "--allow-block-device" in run.stderr,
                "a block device is refused without --allow-block-device", run.stderr)
        run = subprocess.run(base + ["--rw=randread", "--allow-block-device"], capture_output=True,
                             text=True, timeout=60)
        r.check(run.returncode == 0, "a block device may be read with --allow-block-device",
                run.stderr)
        run = subprocess.run(base + ["--rw=randwrite", "--allow-block-device"], capture_output=True,
                             text=True, timeout=60)
        r.check(run.returncode == 2 and "--destructive" in run.stderr,
                "writing a block device needs --destructive", run.stderr)


def main():
    binary = os.path.abspath(sys.argv[1])
    daemon.exit_on_sigterm()
    if shutil.which("fio") is None:
        print("SKIP: fio is not installed")
        return 77
    r = daemon.Results()
    workdir = tempfile.mkdtemp(prefix="iowatch-probe-", dir="/var/tmp")
    try:
        compare_with_fio(r, binary, workdir)
        check_job_sets(r, binary, workdir)
        check_uring_options(r, binary, workdir)
        check_hipri(r, binary, workdir)
        check_safety(r, binary, workdir)
        check_block_device(r, binary, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
