#!/usr/bin/python3
"""`iowatch advise` on a loop device with a partition table, and on a fixture md array.

Live (root, losetup, partx, mkfs.ext4): a 64 MiB loop device with an MBR
written here, partition 1 at sector 63 (the DOS-era start) and partition 2 at
17 MiB, ext4 on partition 2 made with stride=16 and stripe_width=32 (4 KiB
blocks). advise must report partition 1 misaligned (not on 1 MiB; this loop
device's physical block is 512 bytes) and not partition 2, read partition 2's
stripe hints back exactly (64 KiB and 128 KiB), and with --interval count the
200 direct 64 KiB writes made meanwhile at their size. Fixture: a sysfs tree
written here with an md RAID-5 of four disks and 512 KiB chunks under
max_sectors_kb 1280: full_stripe_over_max_sectors, with the 1536 KiB stripe,
and the note that superblocks were not read.

Usage: advise.py IOWATCH_BINARY
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time

import daemon
from serve_hotplug import loop_device

MIB = 1 << 20


def write_mbr(path, partitions):
    """A DOS partition table: (start sector, sectors) per Linux partition."""
    mbr = bytearray(512)
    for i, (start, count) in enumerate(partitions):
        mbr[446 + 16 * i:462 + 16 * i] = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0",
                                                      start, count)
    mbr[510:512] = b"\x55\xaa"
    with open(path, "wb") as f:
        f.truncate(64 * MIB)
        f.write(mbr)


def advise_json(binary, *args):
    run = subprocess.run([binary, *args, "-o", "JSON"], capture_output=True, text=True, timeout=60)
    try:
        return run.returncode, json.loads(run.stdout), run.stderr
    except json.JSONDecodeError:
        return run.returncode, None, run.stdout + run.stderr


def check_loop(r, binary, workdir):
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("losetup", "partx", "mkfs.ext4")):
        print("SKIP: the live part needs root, losetup, partx and mkfs.ext4")
        return
    backing = os.path.join(workdir, "disk.img")
    write_mbr(backing, [(63, 16 * 2048), (17 * 2048, 16 * 2048)])
    with loop_device(backing, 64 * MIB, partscan=True) as dev:
        subprocess.run(["partx", "-a", dev], capture_output=True)  # where -P did not scan yet
        for _ in range(50):
            if os.path.exists(dev + "p2"):
                break
            time.sleep(0.1)
        made = subprocess.run(["mkfs.ext4", "-q", "-F", "-b", "4096", "-E",
                               "stride=16,stripe_width=32", dev + "p2"], capture_output=True,
                              text=True)
        if not r.check(made.returncode == 0, "mkfs.ext4 with stride and stripe_width", made.stderr):
            return
        name = os.path.basename(dev)

        def writer():
            time.sleep(0.3)
            subprocess.run(["dd", "if=/dev/zero", f"of={dev}p1", "bs=64k", "count=200",
                            "oflag=direct"], capture_output=True)

        thread = threading.Thread(target=writer)
        thread.start()
        rc, out, err = advise_json(binary, "advise", name, "--interval", "3")
        thread.join()
        if not r.check(rc == 0 and out and len(out["devices"]) == 1, "advise ran on the loop disk",
                       err[-500:]):
            return
        d = out["devices"][0]
        parts = {p["name"]: p for p in d["partitions"]}
        r.check(parts.get(name + "p1", {}).get("start_sector") == 63 and
                parts.get(name + "p2", {}).get("start_sector") == 17 * 2048,
                "the partitions' start sectors", str(parts))
        fs = parts.get(name + "p2", {}).get("filesystem", {})
        r.check(fs == {"type": "ext4", "block_size": 4096, "stripe_unit_bytes": 65536,
                       "stripe_width_bytes": 131072},
                "ext4's stride and stripe_width read back from the superblock", str(fs))
        misaligned = [f["device"] for f in d["findings"] if f["finding"] == "partition_misaligned"]
        r.check(misaligned == [name + "p1"], "partition 1 (sector 63) misaligned, partition 2 not",
                json.dumps(d["findings"], indent=1))
        o = d["observed"]
        r.check(o["source"] == "diskstats over 3 s" and o["writes"] >= 200 and
                abs(o["average_write_bytes"] - 65536) <= 0.02 * 65536,
                "the 200 direct 64 KiB writes observed at their size", str(o))


def write_tree(root, files):
    for path, value in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(f"{value}\n")


def check_fixture(r, binary, workdir):
    sysfs = os.path.join(workdir, "sys")
    md = {"dev": "9:0", "size": 3 * 2 * 1024 * 1024, "stat": "0 0 0 0 5000 0 280000 0 0 0 0",
          "md/level": "raid5", "md/chunk_size": 512 * 1024, "md/raid_disks": 4, "md/layout": 2,
          "queue/physical_block_size": 4096, "queue/minimum_io_size": 512 * 1024,
          "queue/optimal_io_size": 1536 * 1024, "queue/max_sectors_kb": 1280,
          "queue/max_hw_sectors_kb": 2048, "queue/read_ahead_kb": 6144}
    write_tree(sysfs, {f"block/md0/{k}": v for k, v in md.items()})
    rc, out, err = advise_json(binary, f"--path.sysfs={sysfs}", "advise")
    if not r.check(rc == 0 and out, "advise on a fixture md RAID-5", err[-500:]):
        return
    d = out["devices"][0]
    r.check(d.get("stripe") == {"source": "md raid5", "chunk_bytes": 512 * 1024, "data_disks": 3,
                                "full_stripe_bytes": 1536 * 1024, "parity": True},
            "the md geometry: 3 data disks, a 1536 KiB full stripe", str(d.get("stripe")))
    found = {f["finding"]: f for f in d["findings"]}
    r.check("full_stripe_over_max_sectors" in found and
            "echo 1536 > /sys/block/md0/queue/max_sectors_kb" in
            found["full_stripe_over_max_sectors"]["suggestion"],
            "full stripe over max_sectors_kb, with the setting that fixes it", str(found))
    r.check("small_writes_on_parity_raid" in found,
            "writes averaging 28 KiB on RAID-5: read-modify-write", str(found))
    r.check(any("superblocks not read" in n for n in out["notes"]),
            "says superblocks were not read from a fixture", str(out["notes"]))


def check_escapes(r, binary, workdir):
    """A device whose name holds terminal escapes (a fixture tree: --path.sysfs) is printed with
    them shown, never sent to the terminal (a name is bytes whoever made the device chose)."""
    sysfs = os.path.join(workdir, "sys-escapes")
    name = "sd\x1b]0;PWNED\x07\x1b[2J"
    write_tree(sysfs, {f"block/{name}/{k}": v for k, v in {
        "dev": "8:0", "size": 2 * 1024 * 1024, "stat": "0 0 0 0 100 0 800 0 0 0 0",
        "queue/physical_block_size": 4096, "queue/optimal_io_size": 1024 * 1024,
        "queue/max_sectors_kb": 512, "queue/max_hw_sectors_kb": 2048,
        "queue/read_ahead_kb": 128}.items()})
    result = subprocess.run([binary, f"--path.sysfs={sysfs}", "advise"], capture_output=True,
                            timeout=60)
    out = result.stdout.decode(errors="replace")
    r.check(result.returncode == 0 and "\x1b" not in out and "\x07" not in out and
            "sd\\x1b]0;PWNED\\x07\\x1b[2J" in out,
            "a device named with terminal escapes is printed with them shown", out[:600])


def main():
    binary = os.path.abspath(sys.argv[1])
    daemon.exit_on_sigterm()
    r = daemon.Results()
    workdir = tempfile.mkdtemp(prefix="iowatch-advise-", dir="/var/tmp")
    try:
        check_fixture(r, binary, workdir)
        check_escapes(r, binary, workdir)
        check_loop(r, binary, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
