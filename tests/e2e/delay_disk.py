#!/usr/bin/python3
"""The delay disk the passive recordings' held step runs on (tests/bench/verdicts/delay_disk.cc,
record.py --slowdown=held) does what they count on (root: a FUSE mount and a loop device).

- A loop device on its file, doing direct I/O, has the file's exact size, and what is written
  through it at scattered offsets in 4 KiB to 1 MiB requests reads back the same.
- Each request takes at least its service time (base + per KiB), the lower bound exact: a
  request never completes before its deadline. The upper bound is wide (a loaded machine's
  scheduling adds to it).
- SIGUSR1 multiplies the service time by --slow-factor, SIGUSR2 restores it, each answered
  with "factor X" once in force: every read after the answer takes that long or longer, and
  the median QD1 4 KiB read grows by the step within 30 %.
- SIGTERM with the loop device still attached: the server exits 0, its mount is gone (and
  fusectl, which it mounts to abort the connection, is left as it found it), and the loop
  device's next read fails instead of hanging. Bad arguments: exit 2, named.

Usage: delay_disk.py DELAY_DISK_BINARY
"""
import mmap
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import daemon

BASE_US, PER_KIB_US, FACTOR = 1000, 4, 2.0
SIZE_MIB = 64


def direct_io(fd, offset, size, data=None):
    """One O_DIRECT read or write of `size` bytes at `offset` (an aligned buffer); the bytes
    read, and its duration in seconds."""
    buffer = mmap.mmap(-1, size)
    if data is not None:
        buffer.write(data)
    began = time.monotonic()
    if data is None:
        done = os.preadv(fd, [buffer], offset)
    else:
        done = os.pwritev(fd, [buffer], offset)
    took = time.monotonic() - began
    if done != size:
        raise OSError(f"{'read' if data is None else 'wrote'} {done} of {size} bytes at {offset}")
    return bytes(buffer[:size]), took


def reads(fd, size, count=60):
    """The durations of `count` QD1 reads of `size` bytes at random offsets."""
    return [direct_io(fd, 4096 * random.randrange(SIZE_MIB * 256 - 256), size)[1]
            for _ in range(count)]


def fusectl_mounted():
    with open("/proc/self/mounts") as f:
        return any(line.split()[1] == "/sys/fs/fuse/connections" for line in f)


def take_step(server, sig):
    """Sends a step's signal; what the server says once the new factor is in force."""
    server.send_signal(sig)
    return server.stdout.readline().strip()


def check_bad_arguments(r, binary):
    for args, named in ((["/nonexistent"], "--size-mib"), (["/tmp", "--size-mib=1", "--bogus"],
                        "--bogus"), (["/tmp", "--size-mib=x"], "--size-mib")):
        run = subprocess.run([binary] + args, capture_output=True, text=True, timeout=10)
        r.check(run.returncode == 2 and named in run.stderr,
                f"delay_disk {' '.join(args)}: exit 2 naming {named}",
                f"{run.returncode}: {run.stderr.strip()}")


def main():
    daemon.require_root("a FUSE mount and a loop device")
    daemon.exit_on_sigterm()
    binary = sys.argv[1]
    r = daemon.Results()
    check_bad_arguments(r, binary)
    fusectl_before = fusectl_mounted()
    mnt = tempfile.mkdtemp(prefix="iowatch-delay-")
    server = loop = fd = None
    try:
        server = subprocess.Popen([binary, mnt, f"--size-mib={SIZE_MIB}", f"--base-us={BASE_US}",
                                   f"--per-kib-us={PER_KIB_US}", "--threads=2",
                                   f"--slow-factor={FACTOR}"], stdout=subprocess.PIPE, text=True)
        r.check(server.stdout.readline().strip() == "ready", "delay_disk mounted")
        loop = subprocess.run(["losetup", "-f", "--show", "--direct-io=on",
                               os.path.join(mnt, "disk")], check=True, capture_output=True,
                              text=True).stdout.strip()
        name = os.path.basename(loop)
        with open(f"/sys/block/{name}/size") as f:
            sectors = int(f.read())
        r.check(sectors * 512 == SIZE_MIB << 20, f"{name} is {SIZE_MIB} MiB",
                f"{sectors} sectors")
        fd = os.open(loop, os.O_RDWR | os.O_DIRECT)
        rng = random.Random(7)
        written = []
        for size in (4096, 65536, 262144, 1 << 20, 4096, 131072):
            offset = 4096 * rng.randrange((SIZE_MIB << 20) // 4096 - size // 4096)
            data = rng.randbytes(size)
            direct_io(fd, offset, size, data)
            written.append((offset, size, data))
        # Later writes may overlap earlier ones: the last write of each byte wins.
        expected = {}
        for offset, size, data in written:
            for i in range(0, size, 4096):
                expected[offset + i] = data[i:i + 4096]
        mismatched = [o for o, block in expected.items() if direct_io(fd, o, 4096)[0] != block]
        r.check(not mismatched, f"{len(expected)} written 4 KiB blocks read back the same",
                f"mismatched at {mismatched[:5]}")

        floor = {size: (BASE_US + PER_KIB_US * size / 1024) / 1e6 for size in (4096, 262144)}
        times = {size: [direct_io(fd, 0, size)[1] for _ in range(20)] for size in floor}
        for size, took in times.items():
            r.check(min(took) >= floor[size],
                    f"{size // 1024} KiB reads take their service time "
                    f"({floor[size] * 1e6:.0f} us) or more", f"fastest {min(took) * 1e6:.0f} us")
            r.check(statistics.median(took) < floor[size] + 0.005,
                    f"{size // 1024} KiB reads: median within 5 ms of it",
                    f"median {statistics.median(took) * 1e6:.0f} us")
        small = floor[4096]
        before = reads(fd, 4096)
        said = take_step(server, signal.SIGUSR1)
        r.check(said == f"factor {FACTOR:.3f}", f"SIGUSR1 is answered with factor {FACTOR:.3f}", said)
        slow = reads(fd, 4096)
        said = take_step(server, signal.SIGUSR2)
        r.check(said == "factor 1.000", "SIGUSR2 is answered with factor 1.000", said)
        after = reads(fd, 4096)
        step = statistics.median(slow) - statistics.median(before)
        r.check(min(slow) >= FACTOR * small,
                f"SIGUSR1: every 4 KiB read takes x{FACTOR} its service time or more",
                f"fastest {min(slow) * 1e6:.0f} us")
        r.check(abs(step - (FACTOR - 1) * small) < 0.3 * (FACTOR - 1) * small,
                f"SIGUSR1: the median 4 KiB read {(FACTOR - 1) * small * 1e6:.0f} us slower "
                "(within 30 %)", f"{statistics.median(before) * 1e6:.0f} -> "
                f"{statistics.median(slow) * 1e6:.0f} us")
        r.check(min(after) >= small and statistics.median(after) < statistics.median(slow) - step / 2,
                "SIGUSR2: back to the service time",
                f"median {statistics.median(after) * 1e6:.0f} us, fastest {min(after) * 1e6:.0f}")

        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=30)
        r.check(code == 0, "SIGTERM with the loop device attached: delay_disk exits 0", str(code))
        with open("/proc/self/mounts") as f:
            r.check(mnt not in f.read(), "its mount is gone")
        r.check(fusectl_mounted() == fusectl_before,
                f"fusectl left as found ({'mounted' if fusectl_before else 'not mounted'})")
        try:
            direct_io(fd, 0, 4096)
            failed = False
        except OSError:
            failed = True
        r.check(failed, f"{name}'s next read fails (the connection is aborted), not hangs")
    except Exception:
        traceback.print_exc()
        r.check(False, "no exception")
    finally:
        if fd is not None:
            os.close(fd)
        if loop:
            subprocess.run(["losetup", "-d", loop], check=False)
        if server and server.poll() is None:
            server.kill()
            server.wait()
        subprocess.run(["umount", "-l", mnt], check=False, capture_output=True)
        os.rmdir(mnt)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
