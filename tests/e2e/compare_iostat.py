#!/usr/bin/python3
"""Compares `iowatch iostat` with sysstat's iostat, byte for byte, on random fixtures.

For each fixture (see fixturegen.py) it enters a private mount namespace, binds
the fixture's uptime, stat and devices over /proc, mounts a tmpfs on /dev with a
node per fixture device (sysstat resolves named partitions and -N through
/dev), then runs `iostat -f <fixture>/sys ARGS` and
`iowatch --path.procfs=<fixture>/proc --path.sysfs=<fixture>/sys iostat ARGS`
under the same frozen clock and compares their outputs. The first report of
both is the since-boot average, so the result is deterministic.

Usage: compare_iostat.py IOWATCH_BINARY [--fixtures N] [--seed S]
Needs root (unshare -m, mount). Exits 77 (skip) when that is refused.
"""
import argparse
import os
import random
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixturegen  # noqa: E402

FIXED_OPTIONS = [
    "", "-x", "-x -k", "-x -m", "-d", "-d -m", "-c", "-p ALL", "-x -p ALL", "-p", "-d -p",
    "-z", "-x -z", "ALL", "-x ALL", "-N", "-x -N", "-t", "-x -t", "-y", "-o JSON",
    "-o JSON -x", "-o JSON -x -m", "-o JSON -c", "-o JSON -d -t", "-o JSON -x -p ALL",
    "-o JSON -N -x", "-x -c", "-xz -p ALL",
]
FROZEN_TIME = "2024-03-05 14:07:09"


def option_sets(rng, devices, dm_names):
    sets = list(FIXED_OPTIONS)
    names = [d[0] for d in devices]
    disks = [d[0] for d in devices if d[4] is None]
    parts = [d[0] for d in devices if d[4] is not None]
    sets.append("-x " + " ".join(rng.sample(names, min(3, len(names)))))
    sets.append("-d " + " ".join(rng.sample(names, min(2, len(names)))) + " nosuchdev")
    sets.append("-x -p " + ",".join(rng.sample(disks, min(2, len(disks)))))
    sets.append("-p " + rng.choice(disks))
    if parts:
        sets.append("-x " + rng.choice(parts))
    if dm_names:
        sets.append("-N -x " + rng.choice(list(dm_names.values())))
    return sets


def namespace_script(fixture, iowatch, sets, outdir):
    """A shell script run inside `unshare -m` that writes <outdir>/{ref,our}-<i>.txt."""
    proc, sysd = os.path.join(fixture, "proc"), os.path.join(fixture, "sys")
    lines = ["set -e", "mount --make-rprivate /"]
    for f in ("uptime", "stat", "devices"):
        lines.append(f"mount --bind {proc}/{f} /proc/{f}")
    lines += ["mount -t tmpfs none /dev", "mknod /dev/null c 1 3", "chmod 666 /dev/null",
              "mkdir -m 1777 /dev/shm", "mkdir /dev/mapper"]
    for entry in sorted(os.listdir(os.path.join(sysd, "dev/block"))):
        major, minor = entry.split(":")
        with open(os.path.join(sysd, "dev/block", entry, "stat")):
            pass
    for root, dirs, files in os.walk(os.path.join(sysd, "block")):
        if "dev" in files:
            name = os.path.basename(root)
            with open(os.path.join(root, "dev")) as f:
                major, minor = f.read().strip().split(":")
            lines.append(f"mknod /dev/{name} b {major} {minor}")
            dm = os.path.join(root, "dm", "name")
            if os.path.exists(dm):
                with open(dm) as f:
                    lines.append(f"ln -s ../{name} /dev/mapper/{f.read().strip()}")
    env = f"env TZ=UTC LC_ALL=C faketime '{FROZEN_TIME}'"
    for i, opts in enumerate(sets):
        posix = "POSIXLY_CORRECT=1 " if "-k" not in opts and "-m" not in opts and i % 7 == 3 else ""
        lines.append(f"{env} {posix}/usr/bin/iostat -f {sysd} {opts} > {outdir}/ref-{i}.txt 2>&1 || true")
        lines.append(f"{env} {posix}{iowatch} --path.procfs={proc} --path.sysfs={sysd} iostat {opts}"
                     f" > {outdir}/our-{i}.txt 2>&1 || true")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("iowatch")
    parser.add_argument("--fixtures", type=int, default=25)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        print("SKIP: unshare -m refused (needs root)")
        return 77
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**9)
    print(f"seed {seed} (rerun with --seed {seed})")
    rng = random.Random(seed)
    cpu_count = len([d for d in os.listdir("/sys/devices/system/cpu")
                     if d.startswith("cpu") and d[3:].isdigit()])
    failures = 0
    compared = 0
    with tempfile.TemporaryDirectory(prefix="iowatch-cmp-") as tmp:
        for n in range(args.fixtures):
            fixture_seed = rng.randrange(10**9)
            fixture = os.path.join(tmp, f"fx{n}")
            devices, dm_names = fixturegen.generate(fixture, fixture_seed, cpu_count)
            sets = option_sets(rng, devices, dm_names)
            outdir = os.path.join(tmp, f"out{n}")
            os.makedirs(outdir)
            script = namespace_script(fixture, os.path.abspath(args.iowatch), sets, outdir)
            r = subprocess.run(["unshare", "-m", "--fork", "bash", "-c", script],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"namespace setup failed for fixture seed {fixture_seed}:\n{r.stderr}")
                return 1
            for i, opts in enumerate(sets):
                ref = open(os.path.join(outdir, f"ref-{i}.txt")).read()
                our = open(os.path.join(outdir, f"our-{i}.txt")).read()
                compared += 1
                if ref != our:
                    failures += 1
                    if failures <= 5:
                        print(f"MISMATCH fixture seed {fixture_seed} options '{opts}'")
                        import difflib
                        sys.stdout.writelines(difflib.unified_diff(
                            ref.splitlines(True), our.splitlines(True), "sysstat", "iowatch", n=1))
    print(f"{compared - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
