#!/usr/bin/python3
"""The device under a probe returns EIO, then recovers (root).

A real EIO, not a simulated one: the probe directory is on ext4 on a loop
device with direct I/O (losetup --direct-io=on). Once the daemon has stored
a few runs, the loop's backing file is truncated at the probe file's first
data block (filefrag), so every read of the probe file's blocks fails in
the block layer: the kernel logs "I/O error, dev loopN, sector S op
0x0:(READ)" and the read returns EIO. Checked:
1. during the fault: runs end as errors (iowatch_probe_runs_total
   {result="error"}), each stored with errno 5, the path and "Input/output
   error"; what the kmsg collector's iowatch_kernel_io_errors_total for the
   loop device grew by is, op by op, the count of its "I/O error" lines
   /dev/kmsg holds after the fault began (its sequence numbers); the daemon
   keeps serving /metrics and /healthz;
2. the backing file restored to its size (the blocks read back as zeros):
   ok runs resume without a restart;
3. a storm of 30 failing reads, more than the kernel's rate limit lets
   through, and one more 6 s later: the BPF collector's
   iowatch_block_errors_total grew, op by op, by at least the log's count,
   and by no more than that plus the lines the limit says it held back
   (iowatch_kernel_io_errors_suppressed_total); SIGTERM exits 0.
Everything is unmounted, detached and removed at the end.

Usage: serve_device_eio.py IOWATCH_BINARY
"""
import mmap
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time

import daemon

JOB = "e2e-eio"
IMAGE_BYTES = 32 << 20


def runs(samples, result):
    return sum(daemon.values(samples, "iowatch_probe_runs_total", probe=JOB, result=result))


def first_data_byte(path):
    """The byte offset on the device of the file's first extent (filefrag -e)."""
    out = subprocess.run(["filefrag", "-e", "-b4096", path], check=True, capture_output=True,
                         text=True).stdout
    starts = [int(m.group(1)) for m in
              re.finditer(r"^\s*\d+:\s+\d+\.\.\s*\d+:\s+(\d+)\.\.", out, re.MULTILINE)]
    return min(starts) * 4096 if starts else None


def stored_errors(state):
    con = sqlite3.connect(f"file:{state}/iowatch.db?mode=ro", uri=True, timeout=10)
    try:
        return con.execute("SELECT io_error_errno, io_error_path, error FROM runs "
                           "WHERE result = 'error'").fetchall()
    finally:
        con.close()


def kernel_io_errors(device, after):
    """The block layer's request errors on `device` in the kernel log with a sequence number
    above `after`, by op, read from /dev/kmsg as the daemon reads it; and the last sequence
    number read. None for the counts when records after `after` were already overwritten
    (the ring buffer wrapped: the log no longer holds them all)."""
    counts, first, last = {}, None, after
    for seq, facility, text in daemon.kernel_log():
        first = seq if first is None else first
        last = max(last, seq)
        if seq <= after or facility != 0:
            continue
        m = re.match(r"(?:blk_update_request: )?I/O error, dev (\S+), sector \d+ op "
                     r"0x[0-9a-f]+:\((\w+)\)", text)
        if m and m.group(1) == device:
            counts[m.group(2).lower()] = counts.get(m.group(2).lower(), 0) + 1
    return (None if first is not None and first > after + 1 else counts), last


def daemon_io_errors(samples, device):
    return {l["op"]: int(v) for n, l, v in samples if n == "iowatch_kernel_io_errors_total"
            and l.get("device") == device and l.get("error") == "I/O"}


def daemon_block_errors(samples, device):
    return {l["op"]: int(v) for n, l, v in samples if n == "iowatch_block_errors_total"
            and l.get("device") == device and l.get("error") == "I/O"}


def suppressed(samples):
    return sum(daemon.values(samples, "iowatch_kernel_io_errors_suppressed_total"))


def growth(now, before):
    return {op: n - before.get(op, 0) for op, n in now.items() if n - before.get(op, 0)}


def failing_reads(disk, cut, n):
    """n failing direct reads of the device's byte `cut`, the backing file cut short there
    meanwhile: n request errors, each logged unless the kernel's rate limit holds it back."""
    os.truncate(disk.image, cut)
    try:
        fd = os.open(disk.loop, os.O_RDONLY | os.O_DIRECT)
        buf = mmap.mmap(-1, 4096)
        try:
            for _ in range(n):
                try:
                    os.preadv(fd, [buf], cut)
                except OSError:
                    pass
        finally:
            os.close(fd)
    finally:
        os.truncate(disk.image, IMAGE_BYTES)


def check_bpf_counts(r, d, disk, cut, before, suppressed_before):
    """The BPF collector counted every request error the kernel logged on the device since
    `before`, and those its rate limit held back: a storm of 30 failing reads (10 lines pass
    per 5 s), then, 6 s later, one more, the first line to pass, which the kernel logs after
    its count of the lines it held back."""
    device = os.path.basename(disk.loop)
    time.sleep(6)  # the limit's interval over: the storm starts with a full budget
    failing_reads(disk, cut, 30)
    logged = sum(daemon_io_errors(d.scrape(), device).values())
    time.sleep(6)
    failing_reads(disk, cut, 1)
    ok, _ = d.scrape_until(lambda s: sum(daemon_io_errors(s, device).values()) > logged, 10)
    time.sleep(2.5)  # two more samples: both collectors have read everything
    samples = d.scrape()
    bpf = growth(daemon_block_errors(samples, device), before["bpf"])
    kmsg = growth(daemon_io_errors(samples, device), before["kmsg"])
    held = int(suppressed(samples) - suppressed_before)
    extra = sum(bpf.values()) - sum(kmsg.values())
    # Other tests' errors elsewhere can only add to what the limit held back.
    r.check(ok and set(bpf) == set(kmsg) and all(bpf[op] >= kmsg[op] for op in kmsg) and
            0 < extra <= held,
            f"bpf: block_rq_error counted every error on {device}: {bpf}; the log {kmsg} and "
            f"{held} lines its rate limit held back", f"bpf {bpf}, kmsg {kmsg}, held back {held}")


def check_kmsg_counts(r, d, device, before, after):
    """What the kmsg collector counted on the device since `before` (its counts then) is what
    the kernel logged after sequence number `after` (the log's last record then)."""
    want, got = {}, None

    def agrees(samples):
        nonlocal want, got
        want, _ = kernel_io_errors(device, after)
        now = daemon_io_errors(samples, device)
        got = {op: n - before.get(op, 0) for op, n in now.items() if n - before.get(op, 0)}
        return want is not None and want and got == want
    held, _ = d.scrape_until(agrees, 10)
    r.check(held, f"kmsg: the daemon counts the kernel log's new I/O errors on {device} ({got})",
            f"daemon {got}, /dev/kmsg {want} (None: the ring buffer wrapped)")


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    daemon.require_root("a loop device and a mount")
    daemon.own_mount_namespace()
    work = tempfile.mkdtemp(prefix="iowatch-e2e-eio-", dir="/var/tmp")
    state = os.path.join(work, "state")
    os.makedirs(state)
    d = None
    r = daemon.Results()
    try:
        with daemon.Ext4OnLoop(os.path.join(work, "disk.img"), os.path.join(work, "mnt"),
                               IMAGE_BYTES, direct_io=True) as disk:
            try:  # the daemon goes before its disk is unmounted
                probe_dir = os.path.join(disk.mnt, "probes")
                os.makedirs(probe_dir)
                # No load window before runs: its second let the loop device, a run after
                # the first EIO, read the truncated file as zeros (ok runs) on this kernel;
                # the test is about the failing reads, which must come back to back.
                config = daemon.one_probe_config(
                    JOB, directory=probe_dir,
                    baseline="  baseline:\n    contention: {min_foreign_load: 1e9, max_cpu_wait: 1, "
                             "max_cpu_steal: 1, before: 0s}\n")
                # The BPF collector, and the loop devices it reports (the default filter
                # leaves them out).
                config += "collectors:\n  bpf:\n    enabled: true\ndevices:\n  exclude: ''\n"
                d = daemon.Daemon(sys.argv[1], config=config, state_dir=state)
                d.start()
                ok, samples = d.scrape_until(lambda s: runs(s, "ok") >= 2, 20)
                r.check(ok, "2 ok runs before the fault", d.stderr()[-2000:])
                files = [os.path.join(probe_dir, n) for n in os.listdir(probe_dir)
                         if not n.startswith(".")]
                cut = first_data_byte(files[0]) if len(files) == 1 else None
                if not r.check(cut is not None and 0 < cut < IMAGE_BYTES,
                               f"the probe file's first block is at byte {cut} of the device",
                               str(files)):
                    return r.finish()

                first = d.scrape()
                kmsg_before = daemon_io_errors(first, os.path.basename(disk.loop))
                bpf_before = daemon_block_errors(first, os.path.basename(disk.loop))
                suppressed_before = suppressed(first)
                _, kmsg_after = kernel_io_errors(os.path.basename(disk.loop), 0)
                os.truncate(disk.image, cut)
                errors_before = runs(samples, "error")
                ok, samples = d.scrape_until(lambda s: runs(s, "error") >= errors_before + 2, 20)
                r.check(ok, "EIO: runs end as errors", d.stderr()[-3000:])
                rows = stored_errors(state)
                r.check(rows and all(row[0] == 5 for row in rows) and
                        all("Input/output error" in row[2] for row in rows) and files[0] in rows[0][1],
                        f"EIO: {len(rows)} error runs stored with errno 5, the path and the message",
                        str(rows[:3]))
                kernel = [l for l in subprocess.run(["dmesg"], capture_output=True, text=True).stdout
                          .splitlines() if f"dev {os.path.basename(disk.loop)}," in l and "I/O error" in l]
                print(f"     kernel: {kernel[-1].strip() if kernel else '(dmesg not readable)'}")
                print(f"     stored: {rows[0] if rows else None}")
                check_kmsg_counts(r, d, os.path.basename(disk.loop), kmsg_before, kmsg_after)
                r.check(d.get("/healthz")[0] == 200 and
                        daemon.values(samples, "iowatch_iostat_utilization_ratio"),
                        "EIO: /healthz answers and the iostat series are served")

                os.truncate(disk.image, IMAGE_BYTES)
                ok_before = runs(samples, "ok")
                ok, samples = d.scrape_until(lambda s: runs(s, "ok") >= ok_before + 2, 20)
                r.check(ok, "recovered: ok runs resume without a restart", d.stderr()[-2000:])
                check_bpf_counts(r, d, disk, cut, {"bpf": bpf_before, "kmsg": kmsg_before},
                                 suppressed_before)
                code, seconds = d.stop()
                r.check(code == 0, f"SIGTERM: exit {code} in {seconds:.1f} s", d.stderr()[-2000:])
            finally:
                if d is not None:
                    d.close()
    finally:
        subprocess.run(["rm", "-rf", work], check=False)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
