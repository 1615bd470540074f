#!/usr/bin/python3
"""The whole daemon works as an unprivileged user (root, to become `nobody`).

`iowatch serve` runs under `setpriv` as nobody:nogroup with no supplementary
groups and no capabilities, on a state directory nobody owns, with two probe
jobs (io_uring and psync, direct I/O on files it creates). Checked, through
scrapes and the files:
1. it listens and /healthz answers; the process really is nobody, with an
   empty effective capability set;
2. the collectors work: iowatch_disk_* series for the disks of /proc/diskstats;
3. both jobs have ok runs and a baseline; the store is up with no errors;
4. everything it created (store, probe files) is owned by nobody;
5. SIGTERM: exit 0.
The directory is removed at the end.

Usage: serve_unprivileged.py IOWATCH_BINARY
"""
import os
import pwd
import sys
import tempfile
import time

import daemon

JOBS = ("e2e-nobody-uring", "e2e-nobody-psync")
CONFIG = """\
probes:
  enabled: true
  busy_threshold: 1
  baseline:
    runs: 2
    min_age: 0s
    # Baselines whatever CI's other tests do on the disk (classification: unit tests
    # and tests/bench/verdicts).
    contention: {min_foreign_load: 1e9, max_cpu_wait: 1, max_cpu_steal: 1}
  defaults:
    every: 2s
    jitter: 0s
    timeout: 10s
    options:
      directory: probes
      size: 4M
      direct: 1
      runtime: 500ms
      time_based: 1
      rw: randread
      bs: 4k
  jobs:
    - name: e2e-nobody-uring
      options: {ioengine: io_uring, iodepth: 4}
    - name: e2e-nobody-psync
      options: {ioengine: psync}
"""


def status_field(pid, name):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.split()[1:]
    return []


def owners(top):
    found = set()
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            found.add(os.lstat(os.path.join(root, name)).st_uid)
    return found


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    daemon.require_root("becoming nobody")
    tempfile.tempdir = "/var/tmp"  # O_DIRECT works there; /tmp may be tmpfs
    nobody = pwd.getpwnam("nobody")
    r = daemon.Results()
    d = daemon.Daemon(sys.argv[1], config=CONFIG,
                      wrapper=("setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
                               "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"))
    os.chown(d.dir, nobody.pw_uid, nobody.pw_gid)
    with d:
        pid = d.proc.pid
        r.check(status_field(pid, "Uid")[:2] == [str(nobody.pw_uid)] * 2,
                "the daemon runs as nobody", str(status_field(pid, "Uid")))
        r.check(status_field(pid, "CapEff") == ["0000000000000000"], "no effective capabilities",
                str(status_field(pid, "CapEff")))
        samples = d.scrape()
        r.check(any(n.startswith("iowatch_disk_") for n, _, _ in samples),
                "collectors: iowatch_disk_* series served")

        deadline = time.monotonic() + 40
        def done(s):
            return all(daemon.completed_runs(s, j) >= 2
                       and daemon.values(s, "iowatch_probe_baseline_runs", probe=j) == [2]
                       for j in JOBS)
        while not done(samples) and time.monotonic() < deadline and d.alive():
            time.sleep(0.5)
            samples = d.scrape()
        for job in JOBS:
            r.check(daemon.completed_runs(samples, job)
                    >= 2 and daemon.values(samples, "iowatch_probe_baseline_runs", probe=job) == [2],
                    f"{job}: ok runs and a baseline as nobody",
                    f"{[(l, v) for n, l, v in samples if n == 'iowatch_probe_runs_total']}\n"
                    f"{d.stderr()[-3000:]}")
            r.check(daemon.values(samples, "iowatch_probe_runs_total", probe=job, result="error")
                    == [0], f"{job}: no error runs", d.stderr()[-2000:])
        r.check(daemon.values(samples, "iowatch_probe_store_up") == [1], "store up")
        r.check(daemon.values(samples, "iowatch_probe_store_errors_total") == [0], "no store errors")
        state = os.path.join(d.dir, "state")
        r.check(os.path.exists(os.path.join(state, "iowatch.db")), "the store exists")
        r.check(owners(state) == {nobody.pw_uid}, "everything it created is nobody's",
                str(owners(state)))
        code, _ = d.stop()
        r.check(code == 0, "SIGTERM: exit 0", f"exit {code}\n{d.stderr()[-2000:]}")
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
