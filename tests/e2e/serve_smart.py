#!/usr/bin/python3
"""The SMART collector on this host's disks, through the real smartctl (root).

`iowatch serve` with collectors.smart (every 2 s) asks smartctl about every whole disk.
Checked, for each disk the daemon reports (/sys/block, less dm, md, loop, zram, ram, nbd):
iowatch_smart_up is 1 exactly where smartctl itself reads the disk's health (run here beside
it), with the verdict and identity smartctl gives; where it reads none (a virtio disk: "Unable
to detect device type") up is 0, the collector's cause names it, and the log says so once
however many runs pass, never once per run.

Usage: serve_smart.py IOWATCH_BINARY
"""
import json
import os
import subprocess
import sys
import time

import daemon

CONFIG = ("probes:\n  enabled: false\nsampling:\n  interval: 1s\ndevices:\n  exclude: \"\"\n"
          "collectors:\n  smart:\n    interval: 2s\n    timeout: 30s\n")
VIRTUAL = ("loop", "dm-", "md", "zram", "ram", "nbd")


def smartctl(device):
    run = subprocess.run(["smartctl", "--json=c", "-x", "-n", "standby", f"/dev/{device}"],
                         capture_output=True, text=True, timeout=120)
    return json.loads(run.stdout)


def main():
    daemon.require_root("smartctl's SMART commands")
    daemon.exit_on_sigterm()
    if daemon.missing_tools("smartctl"):
        return 1
    r = daemon.Results()
    disks = sorted(d for d in os.listdir("/sys/block") if not d.startswith(VIRTUAL))
    with daemon.Daemon(sys.argv[1], config=CONFIG) as d:
        held, samples = d.scrape_until(
            lambda s: len(daemon.values(s, "iowatch_smart_up")) == len(disks), 20)
        r.check(held, f"every disk is asked ({disks})",
                str([x for x in samples if x[0] == "iowatch_smart_up"]))
        time.sleep(5)  # two more runs per disk
        samples = d.scrape()
        for disk in disks:
            report = smartctl(disk)
            passed = report.get("smart_status", {}).get("passed")
            up = daemon.values(samples, "iowatch_smart_up", device=disk)
            if passed is None:
                r.check(up == [0], f"{disk}: no SMART here, up 0 ({up})")
            else:
                got = daemon.values(samples, "iowatch_smart_status_passed", device=disk)
                r.check(up == [1] and got == [1 if passed else 0],
                        f"{disk}: the verdict smartctl gives ({got}, passed={passed})")
        without = [disk for disk in disks if "passed" not in smartctl(disk).get("smart_status", {})]
        if without:
            success = daemon.values(samples, "iowatch_collector_success", collector="smart")
            healthy = len(without) < len(disks)
            r.check(success == [1 if healthy else 0],
                    f"the collector fails only when no disk gives its health ({success})")
            said = [line for line in d.stderr().splitlines() if "smart" in line and
                    "Unable to detect device type" in line]
            if not healthy:
                r.check(len(said) == 1, f"the cause is logged once, not once per run ({len(said)})",
                        d.stderr()[-2000:])
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
