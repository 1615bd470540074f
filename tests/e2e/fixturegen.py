#!/usr/bin/python3
"""Generates random but kernel-shaped procfs/sysfs trees for comparison tests.

A tree has proc/{uptime,stat,diskstats,devices,meminfo,vmstat} and
sys/{block/<disk>/stat, block/<disk>/<part>/{stat,partition}, dm/name,
devices/system/cpu/cpuN}; sys/diskstats is a copy of proc/diskstats because
`iostat -f DIR -p ALL` reads DIR/diskstats. Every device line of
/proc/diskstats has the same counters as its sysfs stat file, as on a live
system. Counters cover the kernel's formats (11, 15 and 17 counters), zero
devices, flush-only devices, partitions, dm and md devices, nvme, and huge
64-bit values; tick fields stay below 2^32 as the kernel prints them.
"""
import os
import random
import sys

DISK_KINDS = [
    # (name pattern, major, partition pattern)
    ("sd{l}", 8, "{d}{n}"),
    ("vd{l}", 254, "{d}{n}"),
    ("nvme{i}n1", 259, "{d}p{n}"),
    ("xvd{l}", 202, "{d}{n}"),
    ("mmcblk{i}", 179, "{d}p{n}"),
]
U32 = 2**32 - 1


def counter(rng, magnitude):
    """A count of a given order of magnitude, sometimes zero, sometimes huge."""
    r = rng.random()
    if r < 0.12:
        return 0
    if r < 0.15:
        return rng.randrange(2**40, 2**63)
    return rng.randrange(0, 10**magnitude)


def tick(rng, magnitude):
    r = rng.random()
    if r < 0.1:
        return 0
    if r < 0.13:
        return rng.randrange(2**31, U32)
    return rng.randrange(0, min(U32, 10**magnitude))


def device_counters(rng, field_count, style):
    if style == "zero":
        return [0] * field_count
    mag = rng.choice([2, 4, 6, 8])
    reads, writes = counter(rng, mag), counter(rng, mag)
    c = [reads, counter(rng, mag - 1), counter(rng, mag + 2), tick(rng, mag + 1),
         writes, counter(rng, mag - 1), counter(rng, mag + 2), tick(rng, mag + 1),
         rng.randrange(0, 64), tick(rng, mag + 1), tick(rng, mag + 2)]
    if field_count >= 15:
        c += [counter(rng, mag - 1), counter(rng, mag - 2), counter(rng, mag + 3), tick(rng, mag)]
    if field_count >= 17:
        c += [counter(rng, mag - 1), tick(rng, mag)]
    if style == "flush-only" and field_count >= 17:
        c = [0] * 15 + [rng.randrange(1, 1000), rng.randrange(0, 5000)]
    return c


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def stat_file(counters):
    return " ".join(f"{v:8d}" for v in counters) + "\n"


def generate(root, seed, cpu_count):
    rng = random.Random(seed)
    field_count = rng.choice([11, 15, 17, 17])
    uptime_cs = rng.randrange(1, 10**9)
    lines = []  # diskstats lines in kernel order
    devices = []  # (name, major, minor, counters, parent or None)
    used_names = set()
    for i in range(rng.randrange(1, 9)):
        pattern, major, part_pattern = rng.choice(DISK_KINDS)
        name = pattern.format(l="abcdefghijklmnopqrstuvwxyz"[i] * rng.choice([1, 1, 2]), i=i)
        if name in used_names:
            continue
        used_names.add(name)
        style = rng.choice(["normal"] * 6 + ["zero", "flush-only"])
        devices.append((name, major, 16 * i, device_counters(rng, field_count, style), None))
        for n in range(1, rng.randrange(1, 4)):
            part = part_pattern.format(d=name, n=n)
            devices.append((part, major, 16 * i + n,
                            device_counters(rng, field_count, rng.choice(["normal", "zero"])), name))
    dm_names = {}
    for j in range(rng.randrange(0, 4)):
        name = f"dm-{j}"
        dm_names[name] = f"vg{j}-lv{rng.randrange(100)}"
        devices.append((name, 253, j, device_counters(rng, field_count, rng.choice(["normal"] * 3 + ["zero"])), None))
    for j in range(rng.randrange(0, 3)):
        devices.append((f"md{j}", 9, j, device_counters(rng, field_count, "normal"), None))
    for j in range(rng.randrange(0, 3)):
        devices.append((f"loop{j}", 7, j, device_counters(rng, field_count, rng.choice(["zero", "normal"])), None))
    rng.shuffle(devices)  # the kernel lists by registration order, not by name

    sys_dir = os.path.join(root, "sys")
    proc_dir = os.path.join(root, "proc")
    for name, major, minor, counters, parent in devices:
        lines.append(f"{major:4d} {minor:7d} {name} " + " ".join(str(v) for v in counters))
        rel = f"block/{parent}/{name}" if parent else f"block/{name}"
        write(os.path.join(sys_dir, rel, "stat"), stat_file(counters))
        write(os.path.join(sys_dir, rel, "dev"), f"{major}:{minor}\n")
        # sysstat reads a named partition through /sys/dev/block/MAJ:MIN/stat
        write(os.path.join(sys_dir, "dev/block", f"{major}:{minor}", "stat"), stat_file(counters))
        if parent:
            write(os.path.join(sys_dir, rel, "partition"), f"{minor % 16}\n")
        if name in dm_names:
            write(os.path.join(sys_dir, rel, "dm", "name"), dm_names[name] + "\n")
    diskstats = "\n".join(lines) + "\n"
    write(os.path.join(proc_dir, "diskstats"), diskstats)
    write(os.path.join(sys_dir, "diskstats"), diskstats)
    for c in range(cpu_count):
        write(os.path.join(sys_dir, "devices/system/cpu", f"cpu{c}", "online"), "1\n")
    write(os.path.join(proc_dir, "uptime"), f"{uptime_cs // 100}.{uptime_cs % 100:02d} {rng.randrange(10**9) // 100}.00\n")
    write(os.path.join(proc_dir, "devices"),
          "Character devices:\n  1 mem\n\nBlock devices:\n  7 loop\n  8 sd\n  9 md\n253 device-mapper\n254 virtblk\n259 blkext\n")
    write(os.path.join(proc_dir, "stat"), proc_stat(rng, cpu_count))
    write(os.path.join(proc_dir, "meminfo"), meminfo(rng))
    write(os.path.join(proc_dir, "vmstat"), vmstat(rng))
    return devices, dm_names


def cpu_line(rng, label, scale):
    user, nice = rng.randrange(scale), rng.randrange(scale // 10 + 1)
    guest = rng.randrange(user + 1) if rng.random() < 0.3 else 0
    guest_nice = rng.randrange(nice + 1) if rng.random() < 0.2 else 0
    rest = [rng.randrange(scale) for _ in range(2)] + [rng.randrange(scale * 10)] + \
           [rng.randrange(scale // 5 + 1) for _ in range(4)]
    system, idle, iowait, irq, softirq, steal = rest[0], rest[2], rest[1] // 3, rest[3], rest[4], rest[5]
    values = [user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice]
    return f"{label} " + " ".join(str(v) for v in values)


def proc_stat(rng, cpu_count):
    scale = rng.choice([100, 10**4, 10**6, 10**8])
    lines = [cpu_line(rng, "cpu ", scale)]
    lines += [cpu_line(rng, f"cpu{c}", scale) for c in range(cpu_count)]
    lines.append("intr %d 0 9 0 0" % rng.randrange(10**rng.randrange(1, 12)))
    lines.append("ctxt %d" % rng.randrange(10**rng.randrange(1, 12)))
    lines.append("btime 1764470000")
    lines.append("processes %d" % rng.randrange(10**6))
    lines.append("procs_running %d" % rng.randrange(0, 300))
    lines.append("procs_blocked %d" % rng.randrange(0, 120))
    lines.append("softirq 1 0 0 0 0 0 0 0 0 0 0")
    return "\n".join(lines) + "\n"


MEMINFO_KEYS = ["MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SwapCached", "Active",
                "Inactive", "Active(anon)", "Inactive(anon)", "Active(file)", "Inactive(file)",
                "Unevictable", "Mlocked", "SwapTotal", "SwapFree", "Dirty", "Writeback",
                "AnonPages", "Mapped", "Shmem", "KReclaimable", "Slab", "SReclaimable", "SUnreclaim"]


def huge_or(rng, value):
    """Now and then a value at the top of the 64-bit range, where float rounding shows."""
    return rng.choice([2**64 - 1, 2**63 + rng.randrange(2**40), 2**24 + rng.randrange(3)]) \
        if rng.random() < 0.04 else value


def meminfo(rng):
    mag = rng.choice([5, 7, 9, 11])
    values = {k: huge_or(rng, rng.randrange(10**mag)) for k in MEMINFO_KEYS
              if rng.random() > 0.03}  # an old kernel may lack a field
    if rng.random() < 0.3:
        # used would be negative (kept within 64 bits, as the kernel prints)
        values["SwapFree"] = min(values.get("SwapTotal", 0) + rng.randrange(100), 2**64 - 1)
    out = [f"{k + ':':<16}{v:>8} kB" for k, v in values.items()]
    out.append("HugePages_Total:       0")
    return "\n".join(out) + "\n"


def vmstat(rng):
    mag = rng.randrange(1, 13)
    keys = ["nr_free_pages", "nr_zone_inactive_anon", "pgpgin", "pgpgout", "pswpin", "pswpout",
            "pgfault", "pgmajfault"]
    return "".join(f"{k} {huge_or(rng, rng.randrange(10**mag))}\n" for k in keys)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: fixturegen.py ROOT SEED CPU_COUNT")
    generate(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
