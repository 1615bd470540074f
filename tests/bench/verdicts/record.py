#!/usr/bin/env python3
"""Records one live verdict scenario (docs/benchmarks.md, "Regression
verdicts: false alarms and detections"): the daemon on the bundled config, its
schedule made fast, probing the disk under OUT for MINUTES while the
scenario's load runs; the store it fills is the recording that
`iowatch-replay-verdicts` replays through the old and the new judge.

  record.py BINARY SCENARIO --minutes=M --out=DIR [--throttle=ON:OFF,...]
            [--switch-after=M] [--slowdown=dio|cap] [--cap-share=F]

Scenarios:
  quiet     nothing else on the disk;
  load      competing_load.fio (steady random I/O plus bursts, ~25 % util),
            started before the daemon so the baselines are learned under it;
  slowdown  the same load, and the daemon alone throttled (cgroup v1 blkio or
            v2 io.max) in the windows --throttle gives, in minutes from the
            start: "4:12,20:28" slows the probes from minute 4 to 12 and
            20 to 28; --state-from=LOADDIR continues the load recording's
            store, so the baselines were learned under the same load.
  busy      a busy disk on a shared CPU: an irregular competing load (16 KiB random
            reads and writes at a rate drawn anew every 15-45 s, from none to
            2,500 + 2,500 IOPS) and 0, 1 or 2 CPU burners drawn anew every
            20-60 s, nothing pinned: the hypervisor's steal on this VM goes
            from 1 % to 40 % with them, and the probe's thread waits for a
            CPU. --throttle and --state-from as for slowdown (a busy disk
            slowed down); --throttle-iops and --throttle-bps set the cap.
  busyloop  the busy disk a reviewer found unraised: ext4 on a loop device (a
            sparse 4 GiB file under OUT, the loop doing buffered I/O) beside an
            irregular load on that filesystem (4-16 KiB random reads and
            writes at a rate drawn anew every 15-45 s between 200 and 2,000
            IOPS, no CPU burners), the daemon probing the filesystem with one
            job, 4 KiB randread QD4 every 5 s, baselines learned in the run
            (runs: 5, min_age: 60s, every other key at its default); after
            --switch-after minutes the loop device slows down for good (the
            window's start in events.json, with no end): --slowdown=dio,
            `losetup --direct-io=on` (the reviewer's: its reads no longer
            page-cache copies; here 46 % fewer IOPS quiet, 66-86 % under
            this load), or --slowdown=cap, every user of the loop device
            capped at --cap-share (0.6) of the probe's median IOPS so far
            (cgroup v1: the root blkio group's throttle; v2: a group holding
            the daemon and this script).
  --seed    the random draws' seed (default 27), so a recording can be made
            again with the same schedule of load and burners.

Writes DIR/state/iowatch.db (the runs), DIR/events.json (scenario, start,
throttle windows in unix ms; busyloop's one window has no off_unix_ms),
DIR/iostat.txt (the disks' %util every 10 s) and DIR/daemon.log. Needs root
for the throttle and the loop device; cleans up what it creates (mounts, loop
devices, backing files, cgroups), also when stopped.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

# The throttle: the probes' reads and writes capped below what they do
# healthy even in the busiest moments of the competing load on this VM's disk
# (load recording, 31 min: randread 4k QD1 4,200-16,600 IOPS, mean 11,300;
# randwrite 3,000-16,400, mean 10,300; seqread 1m QD8 820-1,860 MB/s, mean
# 1,170), so that every job slows down in every load band: a disk two to
# five times slower.
THROTTLE_IOPS = 2000
THROTTLE_BPS = 400 * 1000 * 1000


# The daemon on CPU 0 and the competing load on the others, so that what
# else runs on the machine while recording (a developer's compiler) takes
# CPU from neither the probes nor the load: the scenarios are about the disk.
# (The runs record how long the probe waited for a CPU, and the judge sets
# aside runs that waited long: probes/verdicts/run_class.h.)
CPUS = os.cpu_count() or 1
PIN_DAEMON = ["taskset", "-c", "0"] if CPUS > 1 else []
PIN_LOAD = ["taskset", "-c", f"1-{CPUS - 1}"] if CPUS > 1 else []


def now_ms():
    return int(time.time() * 1000)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fast_config(state_dir, port, probe_dir=None):
    """The bundled config with a 15 s schedule (2 s jitter), its own state dir and port; the
    probes in probe_dir when given (the directory is part of a job's fingerprint: a recording
    that continues another's store must probe where it did, or its runs are another series)."""
    with open(os.path.join(ROOT, "config", "iowatch.yaml")) as f:
        text = f.read()
    text = text.replace('listen_address: "127.0.0.1:9860"', f'listen_address: "127.0.0.1:{port}"')
    text = re.sub(r"^state_dir: .*$", f"state_dir: {state_dir}", text, flags=re.M)
    text = re.sub(r"^(    every:) 15m$", r"\1 15s", text, flags=re.M)
    text = re.sub(r"^(    jitter:) 1m$", r"\1 2s", text, flags=re.M)
    if probe_dir:
        text = re.sub(r"^(      directory:) probes$", rf"\1 {probe_dir}", text, flags=re.M)
    return text


# busyloop: the reviewer's case, every key the bundled config's but these. The loop device
# is watched (the bundled config leaves loop devices out), so that the busy check and the
# runs' foreign load read its counters; one job, 4 KiB random reads at QD4 every 5 s (1 s
# jitter: at most half of `every`); baselines of 5 runs spanning a minute.
LOOP_JOB = "randread-4k-qd4"
LOOP_GIB = 4


def loop_config(state_dir, port, probe_dir):
    """The bundled config as the busyloop scenario runs it (LOOP_JOB on probe_dir)."""
    text = fast_config(state_dir, port)
    text = text.replace('exclude: "^(loop|ram|zram|fd)\\\\d+$"', 'exclude: "^(ram|zram|fd)\\\\d+$"')
    text = re.sub(r"^(    runs:) 10$", r"\1 5", text, flags=re.M)
    text = re.sub(r"^(    min_age:) 1h$", r"\1 60s", text, flags=re.M)
    jobs = text.index("\n  jobs:\n")
    text = text[:jobs] + (f"\n  jobs:\n    - name: {LOOP_JOB}\n      every: 5s\n      jitter: 1s\n"
                          f"      options: {{rw: randread, bs: 4k, iodepth: 4, "
                          f"directory: {probe_dir}}}\n")
    for needle in ("^(ram|zram|fd)", "    runs: 5\n", "    min_age: 60s\n"):
        if needle not in text:
            sys.exit(f"config/iowatch.yaml: cannot set busyloop's keys ({needle!r} not found)")
    return text


class LoopDisk:
    """A sparse file under `parent`, a loop device on it doing buffered I/O (the kernel's
    default), ext4 on that, mounted in a temporary directory; close() undoes each step that
    was done, in reverse."""

    def __init__(self, parent, gib=LOOP_GIB):
        self.dir = os.path.join(parent, "loop")
        self.dev = self.mnt = None
        try:
            os.makedirs(self.dir, exist_ok=True)
            backing = os.path.join(self.dir, "backing.img")
            with open(backing, "wb") as f:
                f.truncate(gib << 30)
            self.dev = subprocess.run(["losetup", "--find", "--show", "--direct-io=off", backing],
                                      check=True, capture_output=True, text=True).stdout.strip()
            subprocess.run(["mkfs.ext4", "-q", "-F", self.dev], check=True)
            self.mnt = tempfile.mkdtemp(prefix="iowatch-busyloop-")
            subprocess.run(["mount", self.dev, self.mnt], check=True)
        except BaseException:
            self.close()
            raise

    def sysfs(self, name):
        with open(f"/sys/block/{os.path.basename(self.dev)}/{name}") as f:
            return f.read().strip()

    def majmin(self):
        return self.sysfs("dev")

    def direct_io(self):
        """The slowdown: the loop reads and writes its backing file with O_DIRECT, no longer
        through the page cache; its users see it as a slower disk."""
        subprocess.run(["losetup", "--direct-io=on", self.dev], check=True)
        if self.sysfs("loop/dio") != "1":
            sys.exit(f"{self.dev}: losetup --direct-io=on left loop/dio at "
                     f"{self.sysfs('loop/dio')}")

    def close(self):
        if self.mnt:
            for attempt in range(10):
                if subprocess.run(["umount", self.mnt]).returncode == 0:
                    break
                time.sleep(1)  # a child still closing its file
            else:
                subprocess.run(["umount", "-l", self.mnt])
            os.rmdir(self.mnt)
            self.mnt = None
        if self.dev:
            subprocess.run(["losetup", "-d", self.dev])
            self.dev = None
        shutil.rmtree(self.dir, ignore_errors=True)


class LoopCap:
    """busyloop's --slowdown=cap: the loop device capped at `iops` reads and as many writes a
    second for every process that uses it (cgroup v1: the root blkio group's throttle, which
    binds every group; v2, whose root takes no io.max: a group holding `pids`, the daemon
    and this script, whose later children start in it)."""

    def __init__(self, majmin, iops, pids):
        self.majmin, self.group = majmin, None
        root = "/sys/fs/cgroup/blkio"
        if os.path.isdir(root):
            self.files = [os.path.join(root, f"blkio.throttle.{d}_iops_device")
                          for d in ("read", "write")]
            for name in self.files:
                with open(name, "w") as f:
                    f.write(f"{majmin} {iops}")
            return
        self.files = []
        self.group = Throttle(pids[0], majmin)
        for pid in pids[1:]:
            with open(os.path.join(self.group.path, "cgroup.procs"), "w") as f:
                f.write(str(pid))
        self.group._write("io.max", f"{majmin} riops={iops} wiops={iops}")

    def close(self):
        for name in self.files:
            try:
                with open(name, "w") as f:
                    f.write(f"{self.majmin} 0")
            except OSError:
                pass  # the device is gone: so is its rule
        if self.group:
            self.group.close()


def median_read_iops(db, job):
    """The median read IOPS of the job's successful runs in the store so far."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        values = sorted(v for (v,) in conn.execute(
            "SELECT m.value FROM runs r JOIN run_metrics m ON m.run_id = r.id WHERE r.job = ? "
            "AND r.result = 'ok' AND m.op = 'read' AND m.metric = 'iops'", (job,)))
    if not values:
        sys.exit(f"{db}: no run of {job} to set the cap from")
    return values[len(values) // 2]


def device_of(path):
    st = os.stat(path)
    return f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"


def whole_disk(majmin):
    """The whole disk's major:minor for a partition's (sysfs 'partition' files)."""
    link = os.path.realpath(f"/sys/dev/block/{majmin}")
    if os.path.exists(os.path.join(link, "partition")):
        with open(os.path.join(os.path.dirname(link), "dev")) as f:
            return f.read().strip()
    return majmin


class Throttle:
    """A blkio (v1) or io (v2) cgroup holding the daemon, capped on demand."""

    def __init__(self, pid, majmin):
        self.majmin = majmin
        v1 = "/sys/fs/cgroup/blkio"
        if os.path.isdir(v1):
            self.path, self.v2 = os.path.join(v1, "iowatch-verdicts"), False
        else:
            self.path, self.v2 = "/sys/fs/cgroup/iowatch-verdicts", True
        os.makedirs(self.path, exist_ok=True)
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(pid))

    def _write(self, name, value):
        with open(os.path.join(self.path, name), "w") as f:
            f.write(value)

    def set(self, on):
        if self.v2:
            limits = (f"riops={THROTTLE_IOPS} wiops={THROTTLE_IOPS} rbps={THROTTLE_BPS} "
                      f"wbps={THROTTLE_BPS}") if on else "riops=max wiops=max rbps=max wbps=max"
            self._write("io.max", f"{self.majmin} {limits}")
            return
        for name, value in (("read_iops_device", THROTTLE_IOPS), ("write_iops_device", THROTTLE_IOPS),
                            ("read_bps_device", THROTTLE_BPS), ("write_bps_device", THROTTLE_BPS)):
            self._write(f"blkio.throttle.{name}", f"{self.majmin} {value if on else 0}")

    def close(self):
        try:
            self.set(False)
        except OSError:
            pass
        parent = os.path.dirname(self.path)
        procs = os.path.join(self.path, "cgroup.procs")
        if os.path.exists(procs):
            with open(procs) as f:
                for pid in f.read().split():
                    try:
                        with open(os.path.join(parent, "cgroup.procs"), "w") as out:
                            out.write(pid)
                    except OSError:
                        pass
            os.rmdir(self.path)


class Irregular:
    """The busy scenario (a busy disk on a shared CPU): fio jobs whose rate is drawn anew every
    15-45 s and CPU burners whose number is drawn anew every 20-60 s, each phase logged to
    events."""

    def __init__(self, loaddir, rng, log, loop=False):
        # loop (busyloop): 200-2,000 IOPS in all, 4-16 KiB, never idle, no burners.
        self.loaddir, self.rng, self.log, self.loop = loaddir, rng, log, loop
        self.fio, self.fio_until = None, 0
        self.burners, self.burn_until = [], 0

    def _stop_fio(self):
        if self.fio and self.fio.poll() is None:
            self.fio.terminate()
            self.fio.wait(timeout=30)
        self.fio = None

    def _stop_burners(self):
        for b in self.burners:
            b.kill()
            b.wait()
        self.burners = []

    def step(self, now):
        if now >= self.fio_until:
            self._stop_fio()
            seconds = self.rng.uniform(15, 45)
            if self.loop:
                iops, bs = self.rng.randint(100, 1000), "--bsrange=4k-16k"
            else:
                iops = self.rng.choice([0, 0, 100, 300, 600, 1000, 1500, 2000, 2500])
                bs = "--bs=16k"
            self.fio_until = now + seconds
            self.log.append({"at_unix_ms": now_ms(), "foreign_iops": 2 * iops,
                             "seconds": round(seconds, 1)})
            if iops:
                self.fio = subprocess.Popen(
                    ["fio", "--name=irregular", f"--directory={self.loaddir}", "--rw=randrw",
                     bs, "--ioengine=psync", "--direct=1", "--size=1g", "--time_based=1",
                     f"--runtime={int(seconds) + 5}", f"--rate_iops={iops},{iops}",
                     "--output=/dev/null"], cwd=self.loaddir)
        if now >= self.burn_until and not self.loop:
            self._stop_burners()
            seconds = self.rng.uniform(20, 60)
            count = self.rng.choice([0, 1, 2])
            self.burn_until = now + seconds
            self.log.append({"at_unix_ms": now_ms(), "cpu_burners": count,
                             "seconds": round(seconds, 1)})
            self.burners = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
                            for _ in range(count)]

    def close(self):
        self._stop_fio()
        self._stop_burners()


def windows(spec):
    out = []
    for part in filter(None, (spec or "").split(",")):
        on, off = (float(x) for x in part.split(":"))
        out.append((on, off))
    return out


def main():
    global THROTTLE_IOPS, THROTTLE_BPS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("scenario", choices=("quiet", "load", "slowdown", "busy", "busyloop"))
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--throttle-iops", type=int, default=THROTTLE_IOPS)
    ap.add_argument("--throttle-bps", type=int, default=THROTTLE_BPS)
    ap.add_argument("--minutes", type=float, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--throttle", default="")
    ap.add_argument("--switch-after", type=float, default=8,
                    help="busyloop: minutes before the loop device slows down")
    ap.add_argument("--slowdown", choices=("dio", "cap"), default="dio",
                    help="busyloop: how the loop device slows down: losetup --direct-io=on, or "
                    "capped for all its users at --cap-share of the probe's median IOPS so far")
    ap.add_argument("--cap-share", type=float, default=0.6)
    ap.add_argument("--state-from", help="start from a copy of this recording's store "
                    "(the slowdown scenario continues the load scenario's history)")
    args = ap.parse_args()
    # Stopped early (SIGTERM, or SIGINT even from a background shell, which
    # ignores it): the cleanup below still runs.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if args.scenario == "slowdown" and not args.throttle:
        sys.exit("slowdown needs --throttle windows")
    if args.scenario == "busyloop" and (args.throttle or args.state_from):
        sys.exit("busyloop learns its baselines in the run and slows down by itself: "
                 "no --throttle, no --state-from")
    if args.scenario == "busyloop" and not 0 < args.switch_after < args.minutes:
        sys.exit("busyloop needs 0 < --switch-after < --minutes")
    if not 0 < args.cap_share < 1:
        sys.exit(f"--cap-share: expected a share between 0 and 1, got {args.cap_share}")
    THROTTLE_IOPS, THROTTLE_BPS = args.throttle_iops, args.throttle_bps

    out = os.path.abspath(args.out)
    os.makedirs(os.path.join(out, "state"), exist_ok=True)
    events = {"scenario": args.scenario, "throttle": []}
    loop = None
    try:
        if args.scenario == "busyloop":
            loop = LoopDisk(out)
        record(args, out, events, loop)
    finally:
        if loop:
            loop.close()
        with open(os.path.join(out, "events.json"), "w") as f:
            json.dump(events, f, indent=1)


def record(args, out, events, loop):
    """Runs the scenario, filling events; stops and removes every process and file it started
    (the loop disk is the caller's)."""
    state = os.path.join(out, "state")
    loaddir = os.path.join(loop.mnt if loop else out, "load")
    if args.state_from:
        shutil.copy(os.path.join(args.state_from, "state", "iowatch.db"), state)
    port = free_port()
    config = os.path.join(out, "iowatch.yaml")
    probe_dir = None
    if args.state_from:
        probe_dir = os.path.join(os.path.abspath(args.state_from), "state", "probes")
    if loop:
        probe_dir = os.path.join(loop.mnt, "probes")
        os.makedirs(probe_dir)
    with open(config, "w") as f:
        f.write(loop_config(state, port, probe_dir) if loop
                else fast_config(state, port, probe_dir))
    majmin = loop.majmin() if loop else whole_disk(device_of(out))
    seconds = args.minutes * 60
    events["device"] = majmin

    children = []
    irregular = daemon = throttle = cap = None
    try:
        iostat = subprocess.Popen(["iostat", "-dxy", "10"],
                                  stdout=open(os.path.join(out, "iostat.txt"), "w"))
        children.append(iostat)
        if args.scenario in ("busy", "busyloop"):
            os.makedirs(loaddir, exist_ok=True)
            events["phases"] = []
            if loop:
                events["loop"] = {"device": loop.dev, "backing_gib": LOOP_GIB, "fs": "ext4",
                                  "slowdown": args.slowdown}
                events["baseline"] = {"runs": 5, "min_age": "60s"}
            else:
                events["throttle_iops"], events["throttle_bps"] = THROTTLE_IOPS, THROTTLE_BPS
            irregular = Irregular(loaddir, random.Random(args.seed), events["phases"],
                                  loop=bool(loop))
            subprocess.run(["fio", "--name=layout", f"--directory={loaddir}", "--rw=write",
                            "--bs=1m", "--size=1g", "--filename=irregular.0.0",
                            "--output=/dev/null"], check=True, cwd=loaddir)
            irregular.step(time.time())
        elif args.scenario != "quiet":
            os.makedirs(loaddir, exist_ok=True)
            env = dict(os.environ, LOADDIR=loaddir, LOADSECONDS=str(int(seconds) + 120))
            load = subprocess.Popen(PIN_LOAD + ["fio", os.path.join(HERE, "competing_load.fio"),
                                                "--output", os.path.join(out, "load.json"),
                                                "--output-format=json"],
                                    env=env, cwd=loaddir)
            children.append(load)
            time.sleep(20)  # laid out and running before the first probe
        pin = [] if args.scenario in ("busy", "busyloop") else PIN_DAEMON
        daemon = subprocess.Popen(pin + [args.binary, "serve", f"--config.file={config}"],
                                  stderr=open(os.path.join(out, "daemon.log"), "w"))
        throttled = args.scenario == "slowdown" or (args.scenario == "busy" and args.throttle)
        throttle = Throttle(daemon.pid, majmin) if throttled else None
        start = now_ms()
        events["start_unix_ms"] = start
        pending = windows(args.throttle)
        deadline = time.time() + seconds
        state_on = False
        while time.time() < deadline:
            minute = (now_ms() - start) / 60000
            want = any(on <= minute < off for on, off in pending)
            if throttle and want != state_on:
                throttle.set(want)
                state_on = want
                if want:
                    events["throttle"].append({"on_unix_ms": now_ms()})
                else:
                    events["throttle"][-1]["off_unix_ms"] = now_ms()
                print(f"minute {minute:.1f}: throttle {'on' if want else 'off'}", flush=True)
            if loop and not events["throttle"] and minute >= args.switch_after:
                # The window opens as the switch is asked for (no end: the disk stays
                # slow); a run under way then is outside it, as replay_verdicts counts.
                events["throttle"].append({"on_unix_ms": now_ms()})
                if args.slowdown == "dio":
                    loop.direct_io()
                    print(f"minute {minute:.1f}: {loop.dev} switched to direct I/O", flush=True)
                else:
                    median = median_read_iops(os.path.join(state, "iowatch.db"), LOOP_JOB)
                    iops = int(median * args.cap_share)
                    pids = [daemon.pid, os.getpid()]
                    pids += [irregular.fio.pid] if irregular.fio else []
                    cap = LoopCap(majmin, iops, pids)
                    events["loop"].update(median_read_iops=median, cap_iops=iops)
                    print(f"minute {minute:.1f}: {loop.dev} capped at {iops} IOPS "
                          f"({args.cap_share:.0%} of the probe's median {median:.0f})", flush=True)
            if irregular:
                irregular.step(time.time())
            if daemon.poll() is not None:
                sys.exit(f"the daemon exited ({daemon.returncode}): see {out}/daemon.log")
            time.sleep(1)
        if state_on:
            events["throttle"][-1]["off_unix_ms"] = now_ms()
        events["end_unix_ms"] = now_ms()
    finally:
        if daemon and daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=60)
        if irregular:
            irregular.close()
        if throttle:
            throttle.close()
        if cap:
            cap.close()
        for child in children:
            if child.poll() is None:
                child.terminate()
                child.wait(timeout=30)
        subprocess.run(["rm", "-rf", loaddir, os.path.join(state, "probes")]
                       + ([probe_dir] if probe_dir else []), check=False)

if __name__ == "__main__":
    main()
