"""Shared machinery of the comparison tests against reference tools.

A comparison generates random fixtures (fixturegen.py), and for each one runs
a shell script inside `unshare -m` that binds fixture files over /proc and
runs the reference tool and iowatch with the same options under the same
frozen clock, writing ref-<i>.txt and our-<i>.txt; then it diffs each pair.
"""
import argparse
import difflib
import os
import random
import subprocess
import sys
import tempfile

import fixturegen

FROZEN_TIME = "2024-03-05 14:07:09"
# -f with an absolute time freezes the clock, so timestamps cannot tick between the two runs.
FAKETIME = f"env TZ=UTC LC_ALL=C faketime -f '{FROZEN_TIME}'"


def cpu_count():
    return len([d for d in os.listdir("/sys/devices/system/cpu")
                if d.startswith("cpu") and d[3:].isdigit()])


def bind_lines(fixture, names):
    proc = os.path.join(fixture, "proc")
    return ["set -e", "mount --make-rprivate /"] + [
        f"mount --bind {proc}/{name} /proc/{name}" for name in names]


def run_pair_lines(i, outdir, reference_cmd, iowatch_cmd, env=""):
    return [f"{FAKETIME} {env}{reference_cmd} > {outdir}/ref-{i}.txt 2>&1 || true",
            f"{FAKETIME} {env}{iowatch_cmd} > {outdir}/our-{i}.txt 2>&1 || true"]


def main(description, build_case):
    """build_case(rng, fixture, devices, dm_names, iowatch, outdir) -> (script, option labels)."""
    parser = argparse.ArgumentParser(description=description)
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
    failures = compared = 0
    iowatch = os.path.abspath(args.iowatch)
    with tempfile.TemporaryDirectory(prefix="iowatch-cmp-") as tmp:
        for n in range(args.fixtures):
            fixture_seed = rng.randrange(10**9)
            fixture = os.path.join(tmp, f"fx{n}")
            devices, dm_names = fixturegen.generate(fixture, fixture_seed, cpu_count())
            outdir = os.path.join(tmp, f"out{n}")
            os.makedirs(outdir)
            script, labels = build_case(rng, fixture, devices, dm_names, iowatch, outdir)
            r = subprocess.run(["unshare", "-m", "--fork", "bash", "-c", script],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"namespace setup failed for fixture seed {fixture_seed}:\n{r.stderr}")
                return 1
            for i, label in enumerate(labels):
                ref = open(os.path.join(outdir, f"ref-{i}.txt")).read()
                our = open(os.path.join(outdir, f"our-{i}.txt")).read()
                compared += 1
                if ref == our:
                    continue
                failures += 1
                if failures <= 5:
                    print(f"MISMATCH fixture seed {fixture_seed} options '{label}'")
                    sys.stdout.writelines(difflib.unified_diff(
                        ref.splitlines(True), our.splitlines(True), "reference", "iowatch", n=1))
    print(f"{compared - failures} passed, {failures} failed")
    return 1 if failures else 0
