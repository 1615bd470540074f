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
  passive-steady, passive-bursty, passive-busy
            the passive judge's recordings (docs/metrics.md, "Passive
            judge"; replay_passive replays them): ext4 on a loop device doing
            direct I/O on a sparse 4 GiB file under OUT, fio direct=1 on it
            (so what the workload asks reaches the loop, and the loop's
            backing I/O is the workload's), in a cgroup v1 blkio group. The
            daemon on the bundled config with the BPF collector on, the
            loop device watched, no probes, diskstats windows beside the
            device stage's (passive.shadow_diskstats) and every window kept.
            steady: randrw 70/30, bssplit 4k/60:16k/20:64k/15:256k/5, ~400
            IOPS, QD4; bursty: the same mix at 60 IOPS, and 30 s bursts at
            2,000 IOPS after seeded gaps of 1-5 min; busy: steady, and 0, 1
            or 2 CPU burners drawn anew every 20-60 s (steal); diurnal: the
            same mix at a rate that follows a day's shape compressed into
            the recording (60 IOPS at its start and end, 800 at its middle,
            a raised cosine, set anew every 2 min).
            --slowdown=backing --slow-from=M --slow-to=M: from minute M to
            M, the loop's backing I/O waits (BackingSlowdown: a throttle
            rule on the root disk in the group, and a hidden neighbour in
            the group whose demand alone exceeds it); the loop's device-stage
            mean is measured from /metrics, must rise by 30 % or more (else
            the script exits non-zero) and its factor goes to events.json.
            --slowdown=neighbour: the same window, the step made by a
            neighbour on the root disk (4 KiB random I/O at QD 1, outside
            the group, not on the loop) at the first rate of 100, 200, 400,
            800, 1,600 IOPS that slows the loop's device stage by 30 %.
            --slowdown=held: the loop is on a delay_disk file instead (an
            in-memory disk over FUSE whose requests each take 400 us + 2 us
            a KiB, 4 at a time; --delay-disk names the binary) and the same
            window multiplies that service time by 1.6 and holds it (the
            loop's device stage about x1.4), measured against the 5 minutes
            before: a step the size the passive judge is meant to raise, on
            a disk that does not wander with this VM's own.
            --state-from=DIR continues DIR's passive recording in a new part
            (its store copied, its start and steps kept, the parts listed in
            events.json; a step it refused and stopped at is marked
            "refused"): a new loop device of the same kind under the same
            name, which the daemon, seeing another disk, learns afresh and
            replay_passive replays as the same series.
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
import math
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

    def __init__(self, parent, gib=LOOP_GIB, direct=False, backing=None):
        """`backing`: a file of its own to put the loop on (a DelayDisk's), else a sparse one."""
        self.dir = os.path.join(parent, "loop")
        self.dev = self.mnt = None
        try:
            os.makedirs(self.dir, exist_ok=True)
            if backing is None:
                backing = os.path.join(self.dir, "backing.img")
                with open(backing, "wb") as f:
                    f.truncate(gib << 30)
            self.dev = subprocess.run(["losetup", "--find", "--show",
                                       f"--direct-io={'on' if direct else 'off'}", backing],
                                      check=True, capture_output=True, text=True).stdout.strip()
            subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "nodiscard", self.dev], check=True)
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


def stop_burners(burners):
    for b in burners:
        b.kill()
        b.wait()


def draw_burners(rng, log, now):
    """0, 1 or 2 CPU burners for 20-60 s from `now`, logged: (burners, until)."""
    seconds = rng.uniform(20, 60)
    count = rng.choice([0, 1, 2])
    log.append({"at_unix_ms": now_ms(), "cpu_burners": count, "seconds": round(seconds, 1)})
    return ([subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(count)],
            now + seconds)


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
        stop_burners(self.burners)
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
            self.burners, self.burn_until = draw_burners(self.rng, self.log, now)

    def close(self):
        self._stop_fio()
        self._stop_burners()


# --- The passive scenarios -------------------------------------------------------------------
# The passive judge (docs/metrics.md, "Passive judge") watches the loop device's own I/O: fio
# direct=1 on ext4 on a loop device doing direct I/O on a file on the root disk, so that what
# the workload asks is what reaches the loop (no page cache) and the loop's backing I/O is the
# workload's. The recording is the store's passive_windows, both sources (device stage and
# diskstats) through passive.shadow_diskstats.
PASSIVE = ("passive-steady", "passive-bursty", "passive-busy", "passive-diurnal")
BLKIO_GROUP = f"/sys/fs/cgroup/blkio/iowatch-rec-{os.getpid()}"  # one per recording
STEADY_IOPS = 400                       # randrw 70/30: 280 reads, 120 writes a second
STEADY_MIX = "4k/60:16k/20:64k/15:256k/5"
BURST_IOPS, BURST_SECONDS, FLOOR_IOPS = 2000, 30, 60
SLOW_LIMITS = (4000, 2000, 1000)        # the throttle rule's IOPS on the root disk, tried in turn
SLOW_MIN_FACTOR = 1.3                   # the device-stage mean must rise by >= 30 %
NEIGHBOUR_RATES = (100, 200, 400, 800, 1600)  # the neighbour's 4 KiB IOPS, tried in turn
DIURNAL_FLOOR, DIURNAL_PEAK, DIURNAL_STEP = 60, 800, 120  # IOPS; seconds between two rates


def passive_config(state_dir, port):
    """The bundled config as the passive scenarios run it: the BPF collector on (the device
    stage), diskstats windows beside it, the loop device watched, no probes (a probe's minute
    is not judged), windows kept for a month (a recording keeps every one)."""
    with open(os.path.join(ROOT, "config", "iowatch.yaml")) as f:
        text = f.read()
    edits = (
        ('listen_address: "127.0.0.1:9860"', f'listen_address: "127.0.0.1:{port}"'),
        (r"^state_dir: .*$", f"state_dir: {state_dir}"),
        (r'^(  exclude:) "\^\(loop\|ram\|zram\|fd\)\\\\d\+\$"$', r'\1 "^(ram|zram|fd)\\\\d+$"'),
        (r"^(  bpf:\n(?:    #.*\n)*    enabled:) false$", r"\1 true"),
        (r"^(probes:\n(?:  #.*\n)*  enabled:) true$", r"\1 false"),
        (r"^(  keep_windows:) 1d$", r"\1 30d"),
        (r"^(  shadow_diskstats:) false$", r"\1 true"),
    )
    for pattern, replacement in edits:
        text, n = re.subn(pattern, replacement, text, count=1, flags=re.M)
        if n != 1:
            sys.exit(f"config/iowatch.yaml: cannot set the passive scenarios' keys "
                     f"({pattern!r} not found)")
    if not re.search(r"^  exclude: \"\(dm-\|md\)\.\*\"$", text, flags=re.M):
        sys.exit("config/iowatch.yaml: passive.exclude is no longer \"(dm-|md).*\": "
                 "check that it leaves loop devices judged")
    return text


class BlkioGroup:
    """A cgroup v1 blkio group the workload runs in (the loop charges its backing bios to the
    issuer's group), throttled on the root disk on demand; close() removes the rule, moves
    what is left to the root group and removes the group."""

    def __init__(self, disk):
        if not os.path.isdir("/sys/fs/cgroup/blkio"):
            sys.exit("the passive slowdown needs cgroup v1 blkio (/sys/fs/cgroup/blkio)")
        self.disk, self.path, self.limit = disk, BLKIO_GROUP, 0
        os.makedirs(self.path, exist_ok=True)

    def enter(self):
        """For Popen's preexec_fn: the child joins the group before it execs."""
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def throttle(self, iops):
        for d in ("read", "write"):
            with open(os.path.join(self.path, f"blkio.throttle.{d}_iops_device"), "w") as f:
                f.write(f"{self.disk} {iops}")
        self.limit = iops

    def serviced(self):
        """Requests the group's rule counted on the root disk so far (only while a rule exists)."""
        with open(os.path.join(self.path, "blkio.throttle.io_serviced")) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[0] == self.disk and parts[1] == "Total":
                    return int(parts[2])
        return 0

    def close(self):
        try:
            self.throttle(0)
        except OSError:
            pass
        if not os.path.isdir(self.path):
            return
        with open(os.path.join(self.path, "cgroup.procs")) as f:
            pids = f.read().split()
        for pid in pids:
            try:
                with open("/sys/fs/cgroup/blkio/cgroup.procs", "w") as out:
                    out.write(pid)
            except OSError:
                pass  # gone meanwhile
        for attempt in range(10):
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(1)


def fio(name, directory, args, seconds, group=None, size="1g"):
    """A time-based fio job on `directory`, direct I/O, its output thrown away; in `group`
    from its start when given. Its file is laid out first unless `args` names one that is."""
    return subprocess.Popen(
        ["fio", f"--name={name}", f"--directory={directory}", "--ioengine=libaio", "--direct=1",
         f"--size={size}", "--time_based=1", f"--runtime={int(seconds)}", "--output=/dev/null"]
        + args, cwd=directory, preexec_fn=group.enter if group else None)


# The mix's mean request size: 0.6 x 4 + 0.2 x 16 + 0.15 x 64 + 0.05 x 256 = 28 KiB.
STEADY_MEAN_KIB = sum(int(size.rstrip("k")) * int(share) / 100
                      for size, share in (part.split("/") for part in STEADY_MIX.split(":")))


LOAD_FILE = "load"


def steady_args(iops):
    """The steady mix at `iops` (70 % reads). As bytes a second: fio's rate_iops with a
    bssplit caps the bytes at the smallest size's (4k x iops), a seventh of the IOPS asked.
    No random map: with one, each pass over the file ends in the gaps its larger requests
    left, which fio fills with ever smaller ones, so that at the same bytes a second the
    requests a second rose 4-fold over each pass (about 2 minutes at 400 IOPS) and fell
    back: a sawtooth, not a steady load (the recordings before 6 December had it)."""
    read, write = (round(iops * share * STEADY_MEAN_KIB) for share in (0.7, 0.3))
    return ["--rw=randrw", "--rwmixread=70", f"--bssplit={STEADY_MIX}", "--iodepth=4",
            "--norandommap", f"--rate={read}k,{write}k", f"--filename={LOAD_FILE}"]


class PassiveLoad:
    """The scenario's workload on the loop's filesystem: steady (one fio for the whole run),
    bursty (a floor for the whole run and bursts at seeded gaps) or busy (steady and CPU
    burners drawn anew every 20-60 s, as the busy scenario's); each phase logged to events."""

    def __init__(self, scenario, loaddir, seconds, group, rng, log):
        self.scenario, self.loaddir, self.group, self.rng, self.log = (
            scenario, loaddir, group, rng, log)
        self.procs, self.burst, self.burners = [], None, []
        self.next_burst = time.time() + rng.uniform(60, 240)
        self.burn_until = 0
        self.seconds, self.start, self.next_rate = seconds, time.time(), 0
        if scenario == "passive-diurnal":
            self.period = seconds  # one day's shape over the whole recording
            return
        base = FLOOR_IOPS if scenario == "passive-bursty" else STEADY_IOPS
        self.procs.append(fio("base", loaddir, steady_args(base), seconds + 300, group))

    def diurnal_iops(self, now):
        """A day's load compressed into the recording: the floor at its start and end (the
        night), the peak at its middle, as a raised cosine."""
        phase = (now - self.start) / self.period
        return round(DIURNAL_FLOOR + (DIURNAL_PEAK - DIURNAL_FLOOR)
                     * (1 - math.cos(2 * math.pi * phase)) / 2)

    def next_diurnal(self, now):
        """The next rate of the diurnal load: its fio started before the last one stops, so the
        disk never idles between two."""
        iops = self.diurnal_iops(now)
        self.log.append({"at_unix_ms": now_ms(), "iops": iops})
        old = self.procs
        self.procs = [fio("base", self.loaddir, steady_args(iops), self.seconds + 300,
                          self.group)]
        time.sleep(1)
        for p in old:
            p.terminate()
            p.wait(timeout=30)
        self.next_rate = now + DIURNAL_STEP

    @staticmethod
    def lay_out(loaddir):
        """The workload's one file (base and bursts share it), written before the daemon
        starts: its first minute would otherwise be a gigabyte of sequential writes."""
        subprocess.run(["fio", "--name=layout", f"--directory={loaddir}", "--rw=write",
                        "--bs=1m", "--size=1g", f"--filename={LOAD_FILE}", "--direct=1",
                        "--output=/dev/null"], check=True, cwd=loaddir)

    def step(self, now):
        if self.scenario == "passive-diurnal" and now >= self.next_rate:
            self.next_diurnal(now)
        if self.scenario == "passive-bursty":
            if self.burst and self.burst.poll() is not None:
                self.burst = None
            if not self.burst and now >= self.next_burst:
                self.log.append({"at_unix_ms": now_ms(), "burst_iops": BURST_IOPS,
                                 "seconds": BURST_SECONDS})
                self.burst = fio("burst", self.loaddir, steady_args(BURST_IOPS), BURST_SECONDS,
                                 self.group)
                self.next_burst = now + BURST_SECONDS + self.rng.uniform(60, 300)
        if self.scenario == "passive-busy" and now >= self.burn_until:
            stop_burners(self.burners)
            self.burners, self.burn_until = draw_burners(self.rng, self.log, now)
        for p in self.procs:
            if p.poll() is not None:
                sys.exit(f"the {self.scenario} workload's fio exited ({p.returncode})")

    def close(self):
        for p in self.procs + ([self.burst] if self.burst else []):
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=30)
        stop_burners(self.burners)


def device_stage(port, device):
    """The device's (sum, count) of iowatch_block_latency_seconds{stage="device"}, reads and
    writes, from the daemon's /metrics."""
    import urllib.request
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    total = {"sum": 0.0, "count": 0.0}
    pattern = re.compile(r"^iowatch_block_latency_seconds_(sum|count)\{([^}]*)\} (\S+)$", re.M)
    for kind, labels, value in pattern.findall(text):
        got = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if (got.get("device") == device and got.get("stage") == "device"
                and got.get("op") in ("read", "write")):
            total[kind] += float(value)
    if not total["count"]:
        sys.exit(f"/metrics on port {port}: no device-stage latency of {device} "
                 "(is the BPF collector up? see daemon.log)")
    return total["sum"], total["count"]


def mean_between(a, b):
    count = b[1] - a[1]
    return (b[0] - a[0]) / count if count > 0 else float("nan")


class BackingSlowdown:
    """--slowdown=backing: the loop's backing I/O slowed by a service-time step. The workload
    is in the blkio group; the group gets an IOPS rule on the root disk and a hidden neighbour
    (4 KiB random reads and writes, half each, at QD 4 on a file on the root disk, not on the
    loop) whose demand alone exceeds the rule: the group's throttle queues are never empty, so
    each backing bio waits behind them. Measured: the loop's device-stage mean over the 30 s
    after the step against the minute before; a weaker step is retried at the next limit of
    SLOW_LIMITS, and the scenario refuses (exits) when none reaches SLOW_MIN_FACTOR. The limits
    stay at 2.5x the workload's rate or more: a service-time step, not a cap on throughput.
    On this VM the step is far above 30 %: a queued bio waits for the throttle's next dispatch,
    on a jiffy (CONFIG_HZ=250: 4 ms), so the loop's sub-millisecond mean grew x5-x8 at the
    first limit (a first trial: x6.5 over 30 s, x5.2 over the minute)."""

    def __init__(self, group, port, device, neighbour_dir, events):
        self.group, self.port, self.device, self.dir = group, port, device, neighbour_dir
        self.events, self.neighbour, self.before = events, None, None
        os.makedirs(neighbour_dir, exist_ok=True)
        # Laid out now, outside the group, so the neighbour starts at once.
        subprocess.run(["fio", "--name=neighbour", f"--directory={neighbour_dir}", "--rw=write",
                        "--bs=1m", "--size=256m", "--filename=neighbour", "--direct=1",
                        "--output=/dev/null"], check=True, cwd=neighbour_dir)

    BASELINE_MINUTES = 1

    def mark(self):
        """The figures the step is measured against (BASELINE_MINUTES before it)."""
        self.before = device_stage(self.port, self.device)

    def start(self):
        baseline_end = device_stage(self.port, self.device)
        baseline = mean_between(self.before, baseline_end)
        record = {"on_unix_ms": now_ms(), "baseline_mean_seconds": baseline, "tries": []}
        self.events["throttle"].append(record)
        for trial in self.trials():
            served = self.group.serviced() if self.group else 0
            a = device_stage(self.port, self.device)
            time.sleep(30)
            b = device_stage(self.port, self.device)
            factor = mean_between(a, b) / baseline
            counted = self.group.serviced() - served if self.group else 0
            record["tries"].append({**trial, "mean_seconds": mean_between(a, b),
                                    "factor": round(factor, 3), "serviced": counted})
            through = f" ({counted} requests through the rule)" if "limit_iops" in trial else ""
            print(f"slowdown at {trial}: device-stage mean x{factor:.2f}{through}", flush=True)
            if factor >= SLOW_MIN_FACTOR:
                record.update(trial)
                self.step_start = b
                return
        sys.exit(f"--slowdown: the loop's device-stage mean rose at most "
                 f"x{max(t['factor'] for t in record['tries']):.2f} ({record['tries']}); "
                 f"needs x{SLOW_MIN_FACTOR}: no slowdown recorded")

    def trials(self):
        """Each stronger step in turn, set up before it is measured: the throttle's limits."""
        self.neighbour = fio("neighbour", self.dir,
                             ["--filename=neighbour", "--rw=randrw", "--rwmixread=50",
                              "--bs=4k", "--iodepth=4"], 86400, self.group, size="256m")
        for limit in SLOW_LIMITS:
            self.group.throttle(limit)
            yield {"limit_iops": limit}

    def stop(self):
        end = device_stage(self.port, self.device)
        record = self.events["throttle"][-1]
        record["off_unix_ms"] = now_ms()
        record["factor"] = round(mean_between(self.step_start, end)
                                 / record["baseline_mean_seconds"], 3)
        self.close()
        print(f"slowdown off: device-stage mean x{record['factor']:.2f} over the slowdown",
              flush=True)
        if record["factor"] < SLOW_MIN_FACTOR:
            sys.exit(f"--slowdown=backing: the loop's device-stage mean rose x{record['factor']} "
                     f"over the slowdown, needs x{SLOW_MIN_FACTOR}")

    def close(self):
        self.group.throttle(0)
        if self.neighbour and self.neighbour.poll() is None:
            self.neighbour.terminate()
            self.neighbour.wait(timeout=30)
        self.neighbour = None


class NeighbourSlowdown(BackingSlowdown):
    """--slowdown=neighbour: the root disk the loop's backing file is on gets a neighbour, 4 KiB
    random reads and writes at QD 1 and a fixed rate, outside the workload's group and not on
    the loop: the loop's users see their device slower, as a disk shared with someone else's
    I/O (or one whose media got slower) is, by a measured step rather than the throttle's
    dispatch ticks. The rates of NEIGHBOUR_RATES are tried in turn until the loop's
    device-stage mean has risen by SLOW_MIN_FACTOR; the one that did stays to the end."""

    def trials(self):
        for rate in NEIGHBOUR_RATES:
            self.close()
            self.neighbour = fio("neighbour", self.dir,
                                 ["--filename=neighbour", "--rw=randrw", "--rwmixread=50",
                                  "--bs=4k", "--iodepth=1", f"--rate_iops={rate // 2},{rate // 2}"],
                                 86400, None, size="256m")
            yield {"neighbour_iops": rate}


# --slowdown=held: the loop on a delay_disk file (tests/bench/verdicts/delay_disk.cc), an
# in-memory disk over FUSE whose every request completes (BASE + PER_KIB x KiB) after it
# arrived, served 4 at a time: a device that does not wander with this VM's own disk, whose
# service time the recorder steps by HELD_FACTOR and holds (null_blk's completion_nsec; this
# kernel has no null_blk, scsi_debug, dm-delay, ublk or NBD).
HELD_BASE_US, HELD_PER_KIB_US, HELD_THREADS = 400, 2, 4
HELD_FACTOR = 1.6  # the mix's mean request (28 KiB) 456 us -> 730 us: about +40 % as seen


class DelayDisk:
    """delay_disk serving a LOOP_GIB file on a mountpoint under `parent`; close() stops it (the
    loop device on it must be gone first) and removes the mountpoint."""

    def __init__(self, binary, parent):
        self.mnt = os.path.join(parent, "delay")
        os.makedirs(self.mnt, exist_ok=True)
        self.proc = subprocess.Popen(
            [binary, self.mnt, f"--size-mib={LOOP_GIB << 10}", f"--base-us={HELD_BASE_US}",
             f"--per-kib-us={HELD_PER_KIB_US}", f"--threads={HELD_THREADS}",
             f"--slow-factor={HELD_FACTOR}"], stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            self.close()
            sys.exit(f"{binary}: did not mount on {self.mnt}")
        self.file = os.path.join(self.mnt, "disk")

    def slow(self, on):
        """The step on or off, once in force (delay_disk answers each signal)."""
        if self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGUSR1 if on else signal.SIGUSR2)
        said = self.proc.stdout.readline().strip()
        if not said.startswith("factor "):
            sys.exit(f"delay_disk did not take the step (said {said!r})")

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
        try:
            os.rmdir(self.mnt)
        except OSError:
            pass


class HeldSlowdown(BackingSlowdown):
    """--slowdown=held: the delay disk's service time multiplied by HELD_FACTOR from the step
    to its end, nothing else changed; measured as BackingSlowdown's steps are, against the 5
    minutes before it (a single minute's mean wanders by about 5 %: a x1.55 step measured
    x1.299 against a high one, under the 1.3 the script asks)."""

    BASELINE_MINUTES = 5

    def __init__(self, delay, port, device, events):
        self.delay, self.port, self.device, self.events = delay, port, device, events
        self.before = self.neighbour = self.group = None

    def trials(self):
        self.delay.slow(True)
        yield {"held_factor": HELD_FACTOR}

    def close(self):
        self.delay.slow(False)


def continue_recording(previous, state, events):
    """--state-from for a passive scenario: this recording goes on in PREVIOUS's store (the
    daemon keeps its models across the restart) and its events: the same start, each earlier
    part and step kept; a step the script refused (no off_unix_ms: it stopped there) is
    closed at the part's end and marked refused."""
    with open(os.path.join(previous, "events.json")) as f:
        before = json.load(f)
    shutil.copy(os.path.join(previous, "state", "iowatch.db"), state)
    parts = before.get("parts") or [{"start_unix_ms": before["start_unix_ms"]}]
    parts[-1].setdefault("end_unix_ms", before.get("end_unix_ms")
                         or int(os.path.getmtime(os.path.join(previous, "state", "iowatch.db"))
                                * 1000))
    for step in before["throttle"]:
        if "off_unix_ms" not in step:
            step.update(off_unix_ms=parts[-1]["end_unix_ms"], refused=True)
    events.update(throttle=before["throttle"], parts=parts, device=before["device"],
                  start_unix_ms=before["start_unix_ms"])


def record_passive(args, out, events):
    """A passive scenario on its own loop disk; stops and removes everything it started."""
    state = os.path.join(out, "state")
    port = free_port()
    config = os.path.join(out, "iowatch.yaml")
    with open(config, "w") as f:
        f.write(passive_config(state, port))
    seconds = args.minutes * 60
    root_disk = whole_disk(device_of(out))
    loop = group = load = slow = daemon = iostat = delay = None
    if args.state_from:
        continue_recording(args.state_from, state, events)
    try:
        if args.slowdown == "held":
            delay = DelayDisk(args.delay_disk, out)
        loop = LoopDisk(out, direct=True, backing=delay.file if delay else None)
        device = os.path.basename(loop.dev)
        if events.get("device", device) != device:
            sys.exit(f"--state-from: its series are {events['device']}'s, this loop is {device}")
        held = {"delay_disk": {"base_us": HELD_BASE_US, "per_kib_us": HELD_PER_KIB_US,
                               "threads": HELD_THREADS, "slow_factor": HELD_FACTOR}}
        events.setdefault("parts", [])
        events.update(device=device, root_disk=root_disk, seed=args.seed, phases=[],
                      loop={"device": loop.dev, "backing_gib": LOOP_GIB, "fs": "ext4",
                            "direct_io": loop.sysfs("loop/dio") == "1",
                            **(held if delay else {})},
                      workload={"steady_iops": STEADY_IOPS, "bssplit": STEADY_MIX,
                                "rwmixread": 70, "iodepth": 4})
        if not events["loop"]["direct_io"]:
            sys.exit(f"{loop.dev}: losetup --direct-io=on did not take")
        loaddir = os.path.join(loop.mnt, "load")
        os.makedirs(loaddir)
        group = BlkioGroup(root_disk)
        PassiveLoad.lay_out(loaddir)
        iostat = subprocess.Popen(["iostat", "-dxy", "10"],
                                  stdout=open(os.path.join(out, "iostat.txt"), "w"))
        daemon = subprocess.Popen([args.binary, "serve", f"--config.file={config}"],
                                  stderr=open(os.path.join(out, "daemon.log"), "w"))
        load = PassiveLoad(args.scenario, loaddir, seconds, group, random.Random(args.seed),
                           events["phases"])
        if args.slowdown == "held":
            slow = HeldSlowdown(delay, port, device, events)
        elif args.slowdown in ("backing", "neighbour"):
            kind = BackingSlowdown if args.slowdown == "backing" else NeighbourSlowdown
            slow = kind(group, port, device, os.path.join(out, "neighbour"), events)
        start = now_ms()
        events.setdefault("start_unix_ms", start)
        events["parts"].append({"start_unix_ms": start})
        deadline = time.time() + seconds
        marked = slow_started = False
        while time.time() < deadline:
            minute = (now_ms() - start) / 60000
            if slow and not marked and minute >= args.slow_from - slow.BASELINE_MINUTES:
                slow.mark()
                marked = True
            if slow and not slow_started and minute >= args.slow_from:
                slow_started = True
                print(f"minute {minute:.1f}: slowing {device} ({args.slowdown})", flush=True)
                slow.start()
            if slow and events["throttle"] and "off_unix_ms" not in events["throttle"][-1] \
                    and minute >= args.slow_to:
                slow.stop()
            load.step(time.time())
            if daemon.poll() is not None:
                sys.exit(f"the daemon exited ({daemon.returncode}): see {out}/daemon.log")
            time.sleep(1)
        if slow and events["throttle"] and "off_unix_ms" not in events["throttle"][-1]:
            slow.stop()
        events["end_unix_ms"] = events["parts"][-1]["end_unix_ms"] = now_ms()
    finally:
        if slow:
            slow.close()
        if load:
            load.close()
        if daemon and daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=60)
        if iostat and iostat.poll() is None:
            iostat.terminate()
            iostat.wait(timeout=30)
        if group:
            group.close()
        if loop:
            loop.close()
        if delay:
            delay.close()
        shutil.rmtree(os.path.join(out, "neighbour"), ignore_errors=True)


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
    ap.add_argument("scenario", choices=("quiet", "load", "slowdown", "busy", "busyloop")
                    + PASSIVE)
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--throttle-iops", type=int, default=THROTTLE_IOPS)
    ap.add_argument("--throttle-bps", type=int, default=THROTTLE_BPS)
    ap.add_argument("--minutes", type=float, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--throttle", default="")
    ap.add_argument("--switch-after", type=float, default=8,
                    help="busyloop: minutes before the loop device slows down")
    ap.add_argument("--slowdown", choices=("dio", "cap", "backing", "neighbour", "held"),
                    default=None,
                    help="busyloop: how the loop device slows down: losetup --direct-io=on, or "
                    "capped for all its users at --cap-share of the probe's median IOPS so far")
    ap.add_argument("--cap-share", type=float, default=0.6)
    ap.add_argument("--delay-disk", help="passive --slowdown=held: the delay_disk binary "
                    "(default: tests/bench/delay_disk beside BINARY)")
    ap.add_argument("--slow-from", type=float, help="passive: minute the backing slowdown starts")
    ap.add_argument("--slow-to", type=float, help="passive: minute it ends")
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
    if args.scenario in PASSIVE:
        if args.slowdown not in (None, "backing", "neighbour", "held") or args.throttle:
            sys.exit("the passive scenarios learn in the run and slow down by "
                     "--slowdown=backing|neighbour|held --slow-from=M --slow-to=M only")
        # The step is measured against the minutes before it, from a daemon up by then.
        first = (HeldSlowdown if args.slowdown == "held" else BackingSlowdown).BASELINE_MINUTES + 1
        if args.slowdown and not (first <= (args.slow_from or 0) < (args.slow_to or 0)
                                  <= args.minutes):
            sys.exit(f"--slowdown={args.slowdown} needs {first} <= --slow-from < --slow-to "
                     "<= --minutes")
        args.delay_disk = args.delay_disk or os.path.join(
            os.path.dirname(os.path.abspath(args.binary)), "tests", "bench", "delay_disk")
    elif args.slowdown in ("backing", "neighbour", "held"):
        sys.exit(f"--slowdown={args.slowdown} is the passive scenarios'")
    args.slowdown = args.slowdown or "dio"

    out = os.path.abspath(args.out)
    os.makedirs(os.path.join(out, "state"), exist_ok=True)
    events = {"scenario": args.scenario, "throttle": []}
    loop = None
    try:
        if args.scenario in PASSIVE:
            record_passive(args, out, events)
            return
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
