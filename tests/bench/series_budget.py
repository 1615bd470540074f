#!/usr/bin/python3
"""The series one host sends (by hand; figures in docs/operations.md, "Scaling out"): the daemon
on the bundled config (config/iowatch.yaml), its probe jobs made to run every 5 s so that their
results are in the scrape, then the same with the block-layer BPF collector on. Each series is
counted where it belongs: per probe job (a `probe` label), per cgroup (a `cgroup` label), per
filesystem (a `mountpoint` label), per block device (a `device` label naming a disk, or a
device the kernel logged errors on), else the host's (with 8 per CPU and the probe worker's one
per probed device). Root: the daemon reads cgroups and loads BPF.

Usage: series_budget.py IOWATCH_BINARY SOURCE_DIR
Prints a Markdown table.
"""
import collections
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import daemon  # noqa: E402

SETTLE_S = 25  # every job ran at least once (3 jobs × 3 s, one at a time) and BPF has samples


def bundled_config(source, bpf):
    with open(os.path.join(source, "config", "iowatch.yaml")) as f:
        text = f.read()
    text = re.sub(r"^(\s+every:) 15m$", r"\1 5s", text, count=1, flags=re.M)
    text = re.sub(r"^(\s+jitter:) 1m$", r"\1 0s", text, count=1, flags=re.M)
    if bpf:
        start = text.index("\n  bpf:\n")
        at = text.index("    enabled: false\n", start)
        text = text[:at] + "    enabled: true\n" + text[at + len("    enabled: false\n"):]
    return text


def count(samples):
    """Series per scope: (host, {device: n}, {filesystem: n}, {cgroup: n}, {probe: n})."""
    host = 0
    devices, filesystems, cgroups, probes = (collections.Counter() for _ in range(4))
    for _, labels, _ in samples:
        if "probe" in labels:
            probes[labels["probe"]] += 1
        elif "cgroup" in labels:
            cgroups[labels["cgroup"]] += 1
        elif "mountpoint" in labels:
            filesystems[labels["mountpoint"]] += 1
        elif "device" in labels and ":" not in labels["device"]:  # not a probe's MAJ:MIN
            devices[labels["device"]] += 1
        else:
            host += 1
    return host, devices, filesystems, cgroups, probes


def per(counter):
    return sum(counter.values()) / len(counter) if counter else 0


def measure(binary, source, bpf):
    with daemon.Daemon(binary, config=bundled_config(source, bpf)) as d:
        time.sleep(SETTLE_S)
        samples = d.scrape()
    return len(samples), count(samples)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    daemon.require_root("cgroups and the BPF collector")
    rows = []
    for bpf in (False, True):
        total, scopes = measure(sys.argv[1], sys.argv[2], bpf)
        rows.append((bpf, total, *scopes))
    print("| BPF collector | series in all | host | per device | per filesystem | per cgroup | "
          "per probe job |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for bpf, total, host, devices, filesystems, cgroups, probes in rows:
        print(f"| {'on' if bpf else 'off'} | {total} | {host} | "
              + " | ".join(f"{per(c):.1f} ({', '.join(f'{k} {n}' for k, n in sorted(c.items()))})"
                           for c in (devices, filesystems, cgroups, probes)) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
