#!/usr/bin/env python3
"""Records one live verdict scenario (issue 13): the daemon on the bundled
config, its schedule made fast, probing the disk under OUT for MINUTES while
the scenario's load runs; the store it fills is the recording that
`iowatch-replay-verdicts` replays through the old and the new judge.

  record.py BINARY SCENARIO --minutes=M --out=DIR [--throttle=ON:OFF,...]

Scenarios:
  quiet     nothing else on the disk;
  load      competing_load.fio (steady random I/O plus bursts, ~25 % util),
            started before the daemon so the baselines are learned under it;
  slowdown  the same load, and the daemon alone throttled (cgroup v1 blkio or
            v2 io.max) in the windows --throttle gives, in minutes from the
            start: "4:12,20:28" slows the probes from minute 4 to 12 and
            20 to 28; --state-from=LOADDIR continues the load recording's
            store, so the baselines were learned under the same load.
  busy      issue 27's conditions: an irregular competing load (16 KiB random
            reads and writes at a rate drawn anew every 15-45 s, from none to
            2,500 + 2,500 IOPS) and 0, 1 or 2 CPU burners drawn anew every
            20-60 s, nothing pinned: the hypervisor's steal on this VM goes
            from 1 % to 40 % with them, and the probe's thread waits for a
            CPU. --throttle and --state-from as for slowdown (a busy disk
            slowed down); --throttle-iops and --throttle-bps set the cap.
  --seed    the random draws' seed (default 27), so a recording can be made
            again with the same schedule of load and burners.

Writes DIR/state/iowatch.db (the runs), DIR/events.json (scenario, start,
throttle windows in unix ms), DIR/iostat.txt (the disk's %util every 10 s)
and DIR/daemon.log. Needs root for the throttle; cleans up what it creates.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
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
# aside runs that waited long: probes/baseline/run_class.h.)
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
    """issue 27's busy scenario: fio jobs whose rate is drawn anew every 15-45 s and CPU
    burners whose number is drawn anew every 20-60 s, each phase logged to events."""

    def __init__(self, loaddir, rng, log):
        self.loaddir, self.rng, self.log = loaddir, rng, log
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
            iops = self.rng.choice([0, 0, 100, 300, 600, 1000, 1500, 2000, 2500])
            self.fio_until = now + seconds
            self.log.append({"at_unix_ms": now_ms(), "foreign_iops": 2 * iops,
                             "seconds": round(seconds, 1)})
            if iops:
                self.fio = subprocess.Popen(
                    ["fio", "--name=irregular", f"--directory={self.loaddir}", "--rw=randrw",
                     "--bs=16k", "--ioengine=psync", "--direct=1", "--size=1g", "--time_based=1",
                     f"--runtime={int(seconds) + 5}", f"--rate_iops={iops},{iops}",
                     "--output=/dev/null"], cwd=self.loaddir)
        if now >= self.burn_until:
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
    ap.add_argument("scenario", choices=("quiet", "load", "slowdown", "busy"))
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--throttle-iops", type=int, default=THROTTLE_IOPS)
    ap.add_argument("--throttle-bps", type=int, default=THROTTLE_BPS)
    ap.add_argument("--minutes", type=float, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--throttle", default="")
    ap.add_argument("--state-from", help="start from a copy of this recording's store "
                    "(the slowdown scenario continues the load scenario's history)")
    args = ap.parse_args()
    # Stopped early (SIGTERM, or SIGINT even from a background shell, which
    # ignores it): the cleanup below still runs.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if args.scenario == "slowdown" and not args.throttle:
        sys.exit("slowdown needs --throttle windows")
    THROTTLE_IOPS, THROTTLE_BPS = args.throttle_iops, args.throttle_bps

    out = os.path.abspath(args.out)
    state = os.path.join(out, "state")
    loaddir = os.path.join(out, "load")
    os.makedirs(state, exist_ok=True)
    if args.state_from:
        shutil.copy(os.path.join(args.state_from, "state", "iowatch.db"), state)
    port = free_port()
    config = os.path.join(out, "iowatch.yaml")
    probe_dir = None
    if args.state_from:
        probe_dir = os.path.join(os.path.abspath(args.state_from), "state", "probes")
    with open(config, "w") as f:
        f.write(fast_config(state, port, probe_dir))
    majmin = whole_disk(device_of(out))
    seconds = args.minutes * 60

    children = []
    events = {"scenario": args.scenario, "device": majmin, "throttle": []}
    iostat = subprocess.Popen(["iostat", "-dxy", "10"], stdout=open(os.path.join(out, "iostat.txt"), "w"))
    children.append(iostat)
    irregular = None
    if args.scenario == "busy":
        os.makedirs(loaddir, exist_ok=True)
        events["phases"] = []
        events["throttle_iops"], events["throttle_bps"] = THROTTLE_IOPS, THROTTLE_BPS
        irregular = Irregular(loaddir, random.Random(args.seed), events["phases"])
        subprocess.run(["fio", "--name=layout", f"--directory={loaddir}", "--rw=write",
                        "--bs=1m", "--size=1g", "--filename=irregular.0.0",
                        "--output=/dev/null"], check=True, cwd=loaddir)
        irregular.step(time.time())
    elif args.scenario != "quiet":
        os.makedirs(loaddir, exist_ok=True)
        env = dict(os.environ, LOADDIR=loaddir, LOADSECONDS=str(int(seconds) + 120))
        load = subprocess.Popen(PIN_LOAD + ["fio", os.path.join(HERE, "competing_load.fio"), "--output",
                                 os.path.join(out, "load.json"), "--output-format=json"],
                                env=env, cwd=loaddir)
        children.append(load)
        time.sleep(20)  # laid out and running before the first probe
    pin = [] if args.scenario == "busy" else PIN_DAEMON
    daemon = subprocess.Popen(pin + [args.binary, "serve", f"--config.file={config}"],
                              stderr=open(os.path.join(out, "daemon.log"), "w"))
    children.append(daemon)
    throttled = args.scenario == "slowdown" or (args.scenario == "busy" and args.throttle)
    throttle = Throttle(daemon.pid, majmin) if throttled else None
    start = now_ms()
    events["start_unix_ms"] = start
    try:
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
            if irregular:
                irregular.step(time.time())
            if daemon.poll() is not None:
                sys.exit(f"the daemon exited ({daemon.returncode}): see {out}/daemon.log")
            time.sleep(1)
        if state_on:
            events["throttle"][-1]["off_unix_ms"] = now_ms()
        events["end_unix_ms"] = now_ms()
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=60)
        if irregular:
            irregular.close()
        if throttle:
            throttle.close()
        for child in children:
            if child.poll() is None:
                child.terminate()
                child.wait(timeout=30)
        subprocess.run(["rm", "-rf", loaddir, os.path.join(state, "probes")]
                       + ([probe_dir] if probe_dir else []), check=False)
        with open(os.path.join(out, "events.json"), "w") as f:
            json.dump(events, f, indent=1)


if __name__ == "__main__":
    main()
