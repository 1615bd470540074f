#!/usr/bin/python3
"""The filesystem collector on a host with tens of thousands of mounts (root).

In a private mount namespace, MOUNTS tmpfs (36,000 by default) are mounted under a temporary
directory (mount(2) through ctypes: mount(8) would take minutes) and `iowatch serve` samples
them every second. Checked:
- every mount has its usage within a few samples: the first sample, allowed longer, reads
  them; a later one cannot statfs them all within its deadline and goes on where the last
  stopped, never the same first few thousand every time;
- mounts made while it runs (CHURN, one a second, as a container host makes them) are
  reported with their usage within a few samples, and no sample fails for them: the table,
  0.3-0.5 s of work at this size, is built beside the samples, not within one;
- the collector stays within the sample (no "collector filesystem failed" in the daemon's
  log, iowatch_collector_success 1, its duration under the 1 s interval), a mount keeps its
  figures between its turns.
Prints the collector's duration and how many scraped samples it took (a scrape of 36,000
filesystems takes seconds to parse here, so samples between scrapes are not seen: the log
says what they did). The mount table is parsed only when it changes: re-parsed every
sample, 36,000 mounts took the whole read deadline and only the first few thousand were
ever read.

Usage: serve_many_mounts.py IOWATCH_BINARY [MOUNTS]
"""
import ctypes
import os
import subprocess
import sys
import tempfile
import time
import traceback

import daemon

_libc = ctypes.CDLL(None, use_errno=True)
CHURN = 5  # mounts made while the daemon runs


def mount_tmpfs(path):
    if _libc.mount(b"tmpfs", path.encode(), b"tmpfs", 0, b"size=64k") != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), path)


def with_usage(samples, mnt):
    return {l["mountpoint"] for n, l, _ in samples
            if n == "iowatch_filesystem_size_bytes" and l["mountpoint"].startswith(f"{mnt}/")}


def main():
    daemon.require_root("mounts")
    daemon.own_mount_namespace()
    daemon.exit_on_sigterm()
    binary = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 36000
    r = daemon.Results()
    work = tempfile.mkdtemp(prefix="iowatchmany")
    mnt = f"{work}/mnt"
    try:
        os.makedirs(mnt)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", mnt], check=True)
        start = time.monotonic()
        for i in range(count):
            os.mkdir(f"{mnt}/{i}")
            mount_tmpfs(f"{mnt}/{i}")
        print(f"{count} tmpfs mounted in {time.monotonic() - start:.1f} s", flush=True)
        config = ("probes:\n  enabled: false\nsampling:\n  interval: 1s\ncollectors:\n"
                  f"  filesystem:\n    mount_points_include: \"^{mnt}(/.*)?$\"\n")
        with daemon.Daemon(binary, config=config) as d:
            read, samples_seen, durations, successes = set(), 0, [], []

            def sample_until_all_read(total):
                nonlocal read, samples_seen
                deadline = time.monotonic() + 40
                samples = d.scrape_after_next_sample(timeout=20)
                while True:
                    now = with_usage(samples, mnt)
                    if read - now:
                        r.check(False, "a mount keeps its figures between its turns",
                                f"{len(read - now)} lost theirs")
                    read = now
                    samples_seen += 1
                    durations.extend(daemon.values(samples, "iowatch_collector_duration_seconds",
                                                   collector="filesystem"))
                    successes.extend(daemon.values(samples, "iowatch_collector_success",
                                                   collector="filesystem"))
                    if len(read) == total or time.monotonic() > deadline:
                        return
                    samples = d.scrape_after_next_sample(timeout=20)

            sample_until_all_read(count)
            print(f"{len(read)} of {count} mounts with usage after {samples_seen} samples",
                  flush=True)
            r.check(len(read) == count,
                    f"every mount is read within {samples_seen} samples ({len(read)} of {count})")
            for k in range(CHURN):
                os.mkdir(f"{mnt}/new{k}")
                mount_tmpfs(f"{mnt}/new{k}")
                time.sleep(1)
            before = samples_seen
            sample_until_all_read(count + CHURN)
            r.check(len(read) == count + CHURN,
                    f"the {CHURN} mounts made while it ran are read within "
                    f"{samples_seen - before} samples ({len(read) - count} of {CHURN})")
            print(f"collector duration {min(durations):.2f}-{max(durations):.2f} s", flush=True)
            said = [line for line in d.stderr().splitlines() if "filesystem" in line]
            failed = [line for line in said if "collector filesystem failed" in line]
            r.check(successes and min(successes) == 1 and not failed,
                    f"the collector succeeds every sample ({len(failed)} failures logged, "
                    f"scraped {successes})", "\n".join(said[-5:]))
            r.check(durations and max(durations) < 1.0,
                    f"the collector stays within the 1 s interval (at most {max(durations):.2f} s)")
    except Exception:
        traceback.print_exc()
        r.check(False, "the test ran to its end")
    finally:
        subprocess.run(["umount", "-l", mnt], check=False, capture_output=True)
        subprocess.run(["rm", "-rf", work], check=False)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
