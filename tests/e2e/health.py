#!/usr/bin/python3
"""`iowatch health` on a real disk, its filesystem, its errors and its store (root).

An ext4 filesystem on a loop device with direct I/O, probed by a daemon for a few runs (so its
store holds the probe's series), then:
1. healthy: no problem (exit 0) but those the kernel log holds about the loop device's name
   from earlier in the boot (other tests fail loop devices); the filesystem's used % and
   inodes used % are df's and df -i's Use%; the loop device has no SMART of its own ("none");
   the probe's series is listed, not regressed;
2. a real I/O error (the backing file cut short, a block past the cut read with O_DIRECT): exit
   1; the disk's kernel-log errors grow by the "I/O error, dev loopN," lines /dev/kmsg got
   (counted by sequence number: the ring drops its oldest lines while tests log, and the
   daemon's counts since boot keep the ones it saw);
3. a real ext4 error (trigger_fs_error): exit 1 and "ext4 recorded 1 error(s)";
4. SMART through smartctl on the VM's own disk, smartctl replaced on PATH: a failing NVMe
   document (exit status 8) reads "failed" with its critical warning as problems and exit 1; a
   smartctl that never answers is killed at --smart-timeout and the command returns soon after;
5. -d naming no disk: exit 2 and the message;
6. mkfs.ext4 on a loop device over tmpfs, which refuses the WRITE_ZEROES mkfs zeroes its
   journal with (the kernel logs "operation not supported error, dev loopN, … (WRITE_ZEROES)"
   and mkfs falls back): the count grows by the lines logged, is not a problem, and exits 0
   unless the loop device's name had other errors earlier in the boot.
Everything is unmounted, detached and removed at the end.

Usage: health.py IOWATCH_BINARY SOURCE_DIR
"""
import json
import mmap
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

import daemon

JOB = "e2e-health"


def health(binary, *args, env=None, timeout=60):
    started = time.monotonic()
    p = subprocess.run([binary, "health", *args], capture_output=True, text=True, env=env,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - started


def health_json(binary, *args, env=None):
    code, out, err, seconds = health(binary, *args, "-o", "JSON", env=env)
    try:
        return code, json.loads(out), err, seconds
    except json.JSONDecodeError:
        return code, None, err + out, seconds


def df_use(flag, mount):
    """df's Use% (or df -i's IUse%) of a mount point, as a number."""
    out = subprocess.run(["df", *flag, mount], check=True, capture_output=True, text=True).stdout
    return int(re.search(r"(\d+)%", out.splitlines()[1]).group(1))


IO_ERROR = r"(blk_update_request: )?I/O error, dev {device},"
WRITE_ZEROES = r"operation not supported error, dev {device}, .*\(WRITE_ZEROES\)"


def kernel_lines(pattern, device, after=-1):
    """The kernel's own records (facility 0) matching `pattern` about `device`, newer than
    sequence `after`, that /dev/kmsg holds now. The ring drops its oldest records while tests
    log, so a count since boot is compared by what is new since a sequence, never whole."""
    return sum(1 for sequence, facility, text in daemon.kernel_log() if facility == 0 and
               sequence > after and re.match(pattern.format(device=device), text))


def newest_sequence():
    return max((sequence for sequence, _, _ in daemon.kernel_log()), default=-1)


def listed_errors(doc, op, error):
    """The disk's count of kernel-log errors of one op and kind, as `iowatch health` lists it."""
    return sum(e["count"] for e in doc["disks"][0]["io_errors"]
               if not e["buffer"] and e["op"] == op and e["error"] == error) if doc else None


def failing_read(disk, cut):
    os.truncate(disk.image, cut)
    try:
        fd = os.open(disk.loop, os.O_RDONLY | os.O_DIRECT)
        try:
            os.preadv(fd, [mmap.mmap(-1, 4096)], cut + 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
    finally:
        os.truncate(disk.image, disk.size)


def fake_smartctl(work, name, body):
    bindir = os.path.join(work, name)
    os.makedirs(bindir)
    path = os.path.join(bindir, "smartctl")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)
    return dict(os.environ, PATH=bindir + ":" + os.environ["PATH"])


def check_healthy(r, binary, disk, state, device):
    """The new filesystem has no problem; the only ones said are the kernel log's about this
    loop device's name since boot (other tests fail and shut down loop devices too)."""
    code, doc, err, _ = health_json(binary, "-d", device, "--no-smart", "--state.dir", state)
    if not r.check(doc and len(doc["disks"]) == 1, f"healthy: one disk (exit {code})", err):
        return
    d = doc["disks"][0]
    problems = d["problems"]
    earlier = [p for p in problems if p.endswith("in the kernel log") or
               p.endswith("(kernel log)")]
    logged = kernel_lines(IO_ERROR, device)
    r.check(problems == earlier and code == (1 if problems else 0) and
            (logged == 0 or any("I/O error(s)" in p for p in earlier)),
            f"healthy: exit {code}, no problem but the kernel log's earlier ones on {device} "
            f"({len(earlier)}; {logged} error lines)", json.dumps(problems))
    fs = [f for f in d["filesystems"] if f["mountpoint"] == disk.mnt]
    used, inodes = df_use([], disk.mnt), df_use(["-i"], disk.mnt)
    r.check(fs and fs[0]["used_percent"] == used and fs[0]["inodes_used_percent"] == inodes and
            fs[0]["errors"] == 0 and not fs[0]["readonly"],
            f"used {used} % and inodes used {inodes} % as df and df -i", str(fs))
    r.check(d["smart"]["state"] == "none", f"a loop device has no SMART: {d['smart']}")
    r.check([p["job"] for p in d["probes"]] == [JOB] and not d["probes"][0]["regressed"],
            f"the store's probe series on the disk: {d['probes']}")


def check_io_error(r, binary, disk, state, device, cut):
    _, doc, _, _ = health_json(binary, "-d", device, "--no-smart", "--state.dir", state)
    counted, since = listed_errors(doc, "read", "I/O"), newest_sequence()
    failing_read(disk, cut)
    code, doc, err, _ = health_json(binary, "-d", device, "--no-smart", "--state.dir", state)
    logged = kernel_lines(IO_ERROR, device, since)
    # The I/O kind only: the name's earlier lines of other kinds (an unsupported WRITE_ZEROES
    # of a mkfs on a loop device of the same name) are not the ones counted here.
    got = listed_errors(doc, "read", "I/O")
    r.check(code == 1 and counted is not None and got is not None and
            got - counted == logged and logged > 0 and
            any("I/O error(s) on read requests" in p for p in doc["disks"][0]["problems"]),
            f"an I/O error: exit {code}, {got} errors, {logged} more as the kernel log's "
            f"{logged} new lines", err + (json.dumps(doc["disks"][0]["problems"]) if doc else ""))


def check_fs_error(r, binary, disk, state, device):
    with open(f"/sys/fs/ext4/{device}/trigger_fs_error", "w") as f:
        f.write("iowatch health test\n")
    code, out, err, _ = health(binary, "-d", device, "--no-smart", "--state.dir", state)
    r.check(code == 1 and f"{disk.mnt}: ext4 recorded 1 error(s)" in out,
            f"an ext4 error: exit {code} and the problem said", out + err)


def check_smart(r, binary, work, source_dir):
    disk = os.path.basename(subprocess.run(
        ["findmnt", "-no", "SOURCE", "/"], capture_output=True, text=True).stdout.strip())
    disk = re.sub(r"p?\d+$", "", disk) if not os.path.exists(f"/sys/block/{disk}") else disk
    if not r.check(os.path.exists(f"/sys/block/{disk}"), f"the root disk is {disk}"):
        return
    failing = os.path.join(source_dir, "tests/fixtures/smart/nvme_failing.json")
    env = fake_smartctl(work, "failing", f"cat '{failing}'; exit 8")
    code, doc, err, _ = health_json(binary, "-d", disk, env=env)
    problems = doc["disks"][0]["problems"] if doc else []
    r.check(code == 1 and doc["disks"][0]["smart"]["state"] == "failed" and
            "SMART overall-health self-assessment: FAILED" in problems and
            any(p.startswith("NVMe critical warning 0x05") for p in problems),
            f"a failing disk: exit {code}, {problems}", err)
    env = fake_smartctl(work, "hung", "exec sleep 600")
    code, doc, err, seconds = health_json(binary, "-d", disk, "--smart-timeout", "1", env=env)
    smart = doc["disks"][0]["smart"] if doc else {}
    r.check(code == 0 and smart.get("state") == "unavailable" and
            "did not answer within 1 s" in smart.get("detail", "") and seconds < 10,
            f"a smartctl that never answers: killed, {smart}, returned in {seconds:.1f} s", err)


def check_mkfs_on_tmpfs(r, binary, work):
    tmpfs = os.path.join(work, "tmpfs")
    os.makedirs(tmpfs)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=80m", "iowatch-e2e", tmpfs], check=True)
    loop = None
    try:
        image = os.path.join(tmpfs, "disk.img")
        with open(image, "wb") as f:
            f.truncate(64 << 20)
        loop = subprocess.run(["losetup", "-f", "--show", image], check=True, capture_output=True,
                              text=True).stdout.strip()
        device = os.path.basename(loop)
        state = os.path.join(work, "state")
        _, doc, _, _ = health_json(binary, "-d", device, "--no-smart", "--state.dir", state)
        counted, since = listed_errors(doc, "write_zeroes", "operation not supported"), \
            newest_sequence()
        subprocess.run(["mkfs.ext4", "-q", "-F", loop], check=True, capture_output=True)
        logged = kernel_lines(WRITE_ZEROES, device, since)
        if not r.check(logged > 0, f"mkfs.ext4 on {device} over tmpfs: the kernel logged "
                       f"{logged} unsupported WRITE_ZEROES"):
            return
        code, doc, err, _ = health_json(binary, "-d", device, "--no-smart", "--state.dir", state)
        d = doc["disks"][0] if doc and doc["disks"] else {"io_errors": [], "problems": []}
        listed = listed_errors(doc, "write_zeroes", "operation not supported")
        problems = d["problems"]
        r.check(counted is not None and listed == counted + logged and
                not any("operation not supported" in p for p in problems) and
                code == (1 if problems else 0),
                f"mkfs.ext4's unsupported WRITE_ZEROES: listed ({counted} + {logged}: {listed}), "
                f"not a problem, "
                f"exit {code}", err + json.dumps(problems))
    finally:
        if loop:
            subprocess.run(["losetup", "-d", loop], check=False)
        subprocess.run(["umount", tmpfs], check=False)


def check_bad_state_file(r, binary, work):
    """The daemon's kernel-log counts as a FIFO: iowatch health neither waits on it nor moves
    it (it only reads), and says in a note which file was not used and why."""
    state = os.path.join(work, "fifo-state")
    os.makedirs(state)
    fifo = os.path.join(state, "kmsg-errors.json")
    os.mkfifo(fifo)
    code, doc, err, seconds = health_json(binary, "--no-smart", "--state.dir", state)
    notes = doc.get("notes", []) if doc else []
    want = (f"kernel log errors: {fifo}: cannot read the kmsg counts: expected a regular file, "
            "found a FIFO; counting this boot's records again from the kernel log")
    r.check(code in (0, 1) and want in notes and stat.S_ISFIFO(os.lstat(fifo).st_mode),
            f"a FIFO as the kmsg state file: a note naming it, left where it is, {seconds:.1f} s",
            f"exit {code}, notes {notes}, {err[-500:]!r}")


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    binary, source_dir = sys.argv[1], sys.argv[2]
    daemon.require_root("a loop device and a mount")
    daemon.own_mount_namespace()
    work = tempfile.mkdtemp(prefix="iowatch-e2e-health-", dir="/var/tmp")
    state = os.path.join(work, "state")
    os.makedirs(state)
    r = daemon.Results()
    try:
        with daemon.Ext4OnLoop(os.path.join(work, "disk.img"), os.path.join(work, "mnt"),
                               64 << 20, direct_io=True) as disk:
            device = os.path.basename(disk.loop)
            probe_dir = os.path.join(disk.mnt, "probes")
            os.makedirs(probe_dir)
            config = daemon.one_probe_config(JOB, directory=probe_dir) + \
                "devices:\n  exclude: ''\n"
            d = daemon.Daemon(binary, config=config, state_dir=state)
            try:
                d.start()
                ok, _ = d.scrape_until(
                    lambda s: sum(daemon.values(s, "iowatch_probe_runs_total", probe=JOB,
                                                result="ok")) >= 2, 20)
                r.check(ok, "the daemon stored 2 probe runs", d.stderr()[-2000:])
                code, _ = d.stop()
            finally:
                d.close()
            with open(os.path.join(disk.mnt, "data"), "wb") as f:
                f.write(os.urandom(8 << 20))
            os.sync()
            check_healthy(r, binary, disk, state, device)
            check_io_error(r, binary, disk, state, device, 60 << 20)
            check_fs_error(r, binary, disk, state, device)
        check_smart(r, binary, work, source_dir)
        check_bad_state_file(r, binary, work)
        code, _, err, _ = health(binary, "-d", "nosuchdisk", "--no-smart")
        r.check(code == 2 and "no whole disk named nosuchdisk" in err,
                f"-d naming no disk: exit {code}: {err.strip()}")
        check_mkfs_on_tmpfs(r, binary, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
