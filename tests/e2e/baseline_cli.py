#!/usr/bin/python3
"""`iowatch baseline` end to end, on a store that store_writer filled.

store_writer (tests/unit/probes/store/store_writer_main.cc) adds synthetic runs of two
jobs (randread-4k, randwrite-4k of a file under /var/tmp, recorded on that
file's disk and model as a daemon would) to a store under /var/tmp; it is
stopped once enough runs are reported. Then the real
binary lists, shows, captures, resets, exports and imports baselines, and the
script checks its outputs and exit codes against what python's sqlite3 reads
from the same file: the right runs are chosen, a capture is pinned, a reset
deletes, an export imports back, an imported golden baseline marks slower runs
with '!', lands on a job of the same workload named otherwise, is refused
on a disk of another model, and every error is one line on stderr with exit
status 2.
No root needed.

Usage: baseline_cli.py IOWATCH_BINARY STORE_WRITER_BINARY
"""
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile

import daemon

JOB = "randread-4k"


def fnv1a32(text):
    h = 0x811C9DC5
    for byte in text.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"


PROBE_FILE = "/var/tmp/store_writer.probe"  # store_writer's runs' filename
# store_writer's job options, as a config's probe job (the fingerprint the runs have).
JOB_OPTIONS = "{rw: randrw, ioengine: psync, iodepth: 1, bs: 4k, direct: 0}"


def disk_of(path):
    """(major:minor, model, firmware) of the whole disk holding path, as iowatch
    finds it (a partition's disk; the bare device number when sysfs has none)."""
    st = os.stat(path)
    device = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    sys_dir = os.path.realpath(f"/sys/dev/block/{device}")
    if not os.path.isdir(sys_dir):
        return device, "", ""
    if os.path.exists(os.path.join(sys_dir, "partition")):
        sys_dir = os.path.dirname(sys_dir)

    def attribute(*names):
        for name in names:
            try:
                with open(os.path.join(sys_dir, name)) as f:
                    return f.read().strip()
            except OSError:
                pass
        return ""
    return attribute("dev"), attribute("device/model"), attribute("device/firmware_rev",
                                                                     "device/rev")


def write_config(workdir, name, jobs):
    """A daemon config whose probes.jobs are `jobs` [(name, filename)], store in workdir."""
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        f.write(f"state_dir: {workdir}\nprobes:\n  defaults:\n    options: {{}}\n  jobs:\n")
        for job, filename in jobs:
            f.write(f"    - name: {job}\n      options: {{filename: {filename}, "
                    f"{JOB_OPTIONS[1:]}\n")
    return path


def fill_store(writer, db, disk=None, min_runs=40):
    """Runs store_writer until it has reported min_runs committed runs; disk (device, model, ...)
    is their disk, store_writer's own 259:0 when None."""
    argv = [writer, db, "5"] + ([disk[0], disk[1]] if disk else [])
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reported = 0
    try:
        for line in proc.stdout:
            if line.startswith("run "):
                reported += 1
            if reported >= min_runs:
                break
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    return reported


class Store:
    """What python's sqlite3 sees in the database."""

    def __init__(self, db):
        self.db = db

    def query(self, sql, *args):
        con = sqlite3.connect(self.db, timeout=10)
        try:
            rows = con.execute(sql, args).fetchall()
            con.commit()  # a DELETE of the script's own
            return rows
        finally:
            con.close()

    def ok_runs(self, job):
        """Ids of the job's successful runs, newest first (as the store orders them)."""
        return [r[0] for r in self.query(
            "SELECT id FROM runs WHERE job = ? AND result = 'ok' ORDER BY start_unix_ms DESC, id DESC",
            job)]

    def metric(self, run_id, op, metric):
        rows = self.query("SELECT value FROM run_metrics WHERE run_id = ? AND op = ? AND metric = ?",
                          run_id, op, metric)
        return rows[0][0] if rows else None

    def fingerprint(self, job):
        return self.query("SELECT fingerprint FROM runs WHERE job = ? LIMIT 1", job)[0][0]


def check_export_is_synced(results, iowatch, env, workdir):
    """The export's system calls, as strace sees them: a temporary file of its own created
    O_EXCL|O_NOFOLLOW beside the target, fsynced, renamed over it, the directory fsynced (after
    a power loss XFS left an empty file where the rename had reached the disk before the data)."""
    if shutil.which("strace") is None:
        print("strace not installed: the export's fsync order is not checked")
        return
    target = os.path.join(workdir, "synced.json")
    trace = os.path.join(workdir, "export.strace")
    p = subprocess.run(["strace", "-f", "-o", trace, "-e",
                        "trace=openat,fsync,rename,renameat,renameat2",
                        iowatch, "baseline", f"--state.dir={workdir}", "export", target],
                       capture_output=True, text=True, env=env, timeout=60)
    with open(trace) as f:
        calls = f.read().splitlines()
    steps = []  # what was done to whom, in order: the temporary, the directory, the target
    directory_fd = temporary_fd = None
    for line in calls:
        opened = re.search(r'openat\((?:AT_FDCWD|\d+), "([^"]*)", ([A-Z_|]+)(?:, 0\d+)?\) = (\d+)',
                           line)
        synced = re.search(r"fsync\((\d+)\)\s+= 0", line)
        if opened and opened.group(1) == workdir and "O_DIRECTORY" in opened.group(2):
            directory_fd = opened.group(3)
        elif opened and re.fullmatch(r"synced\.json\.[0-9a-f]{16}\.tmp", opened.group(1)):
            temporary_fd = opened.group(3)
            flags = set(opened.group(2).split("|"))
            steps.append("create O_EXCL|O_NOFOLLOW" if {"O_EXCL", "O_NOFOLLOW"} <= flags
                         else "create " + opened.group(2))
        elif synced:
            steps.append({temporary_fd: "fsync the file",
                          directory_fd: "fsync the directory"}.get(synced.group(1), "fsync"))
        elif "rename" in line and '"synced.json"' in line and line.endswith("= 0"):
            steps.append("rename")
    results.check(p.returncode == 0 and steps[-4:] == ["create O_EXCL|O_NOFOLLOW", "fsync the file",
                                                       "rename", "fsync the directory"],
                  "export: a temporary created O_EXCL|O_NOFOLLOW, fsynced, renamed, the directory "
                  "fsynced", f"exit {p.returncode}, steps {steps}, {p.stderr[-300:]!r}\n" +
                  "\n".join(calls[-12:]))

def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    iowatch, writer = (os.path.abspath(a) for a in sys.argv[1:3])
    daemon.exit_on_sigterm()
    results = daemon.Results()
    workdir = tempfile.mkdtemp(prefix="iowatch-baseline-cli-", dir="/var/tmp")
    db = os.path.join(workdir, "iowatch.db")
    env = dict(os.environ, TZ="UTC")

    def run(*args, stdin=None, state_dir=workdir):
        argv = [iowatch, "baseline"] + ([f"--state.dir={state_dir}"] if state_dir else []) + \
            list(args)
        p = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def expect_ok(what, args, **kw):
        code, out, err = run(*args, **kw)
        results.check(code == 0 and err == "", f"{what}: exit 0, nothing on stderr",
                      f"exit {code}, stderr {err!r}")
        return out

    def expect_error(what, args, message, **kw):
        code, out, err = run(*args, **kw)
        results.check(code == 2, f"{what}: exit 2", f"exit {code}, stdout {out[:300]!r}")
        results.check(message in err and err.count("\n") == 1 and err.startswith("iowatch baseline"),
                      f"{what}: one line on stderr saying {message!r}", repr(err))
        return err

    try:
        # --- A missing store is reported, not created. ------------------------
        expect_error("list without a store", ["list"],
                     f"no store at {db} (has `iowatch serve` run with --state.dir={workdir}?)")
        results.check(not os.path.exists(db), "the store was not created")

        # --- Command-line errors and help. -----------------------------------
        expect_error("no action", [], "expected an action")
        expect_error("unknown action", ["frobnicate"], "unknown action \"frobnicate\"")
        expect_error("show without a job", ["show"], "usage: iowatch baseline show JOB")
        expect_error("bad --runs", ["capture", JOB, "--runs=0"], "--runs")
        expect_error("bad --device", ["capture", JOB, "--device=sda"], "MAJOR:MINOR")
        out = expect_ok("--help", ["--help"], state_dir=None)
        results.check(out.startswith("Usage: iowatch baseline"), "--help prints the usage", out[:200])

        disk = disk_of(os.path.dirname(PROBE_FILE))
        device, model = disk[0], disk[1]
        reported = fill_store(writer, db, disk)
        store = Store(db)
        runs = store.ok_runs(JOB)
        results.check(reported >= 40 and len(runs) >= 20,
                      f"store_writer committed {reported} runs, {len(runs)} of {JOB}")
        fingerprint = store.fingerprint(JOB)

        # --- Before any baseline. ----------------------------------------------
        out = expect_ok("list, empty", ["list"])
        results.check(out == f"no baselines in {db}\n", "list says there are no baselines", out)
        out = expect_ok("show before a baseline", ["show", JOB])
        results.check("no baseline yet" in out, "show says there is no baseline yet", out[:300])
        shown = [int(i) for i in re.findall(r"#(\d+)", out)]
        results.check(shown == runs[:10], "show lists the newest 10 successful runs, newest first",
                      f"{shown} vs {runs[:10]}")
        expect_error("show of an unknown job", ["show", "nope"],
                     "no baseline and no successful run of job \"nope\"")

        # --- Capture. -------------------------------------------------------------
        expect_error("capture with too few runs", ["capture", JOB, "--runs=100000"],
                     f"only {len(runs)} successful runs of {JOB} on {device}; need 100000 (--runs)")
        elsewhere = "4095:4095"
        expect_error("capture on a device without runs", ["capture", JOB, f"--device={elsewhere}"],
                     f"no successful run of {JOB} on {elsewhere}")
        # The state dir after the action works too.
        code, out, err = run("capture", JOB, "--runs=5", f"--state.dir={workdir}", state_dir=None)
        results.check(code == 0 and err == "", "capture --runs=5: exit 0", f"{code} {err!r}")
        chosen = sorted(runs[:5])
        results.check(f"captured" in out and f"from 5 runs ({' '.join(f'#{i}' for i in chosen)})"
                      in out, "capture names the 5 newest runs, oldest first", out[:400])
        rows = store.query("SELECT id, pinned, run_count FROM baselines WHERE job = ?", JOB)
        results.check(len(rows) == 1 and rows[0][1] == 1 and rows[0][2] == 5,
                      "the store holds one pinned baseline of 5 runs", str(rows))
        linked = sorted(r[0] for r in store.query(
            "SELECT run_id FROM baseline_runs WHERE baseline_id = ?", rows[0][0])) if rows else []
        results.check(linked == chosen, "the baseline is linked to those runs", f"{linked}")
        median_iops = statistics.median(store.metric(i, "read", "iops") for i in chosen)
        stored = store.query("SELECT median FROM baseline_metrics m JOIN baselines b "
                             "ON m.baseline_id = b.id WHERE b.job = ? AND op = 'read' "
                             "AND metric = 'iops'", JOB)
        results.check(stored and abs(stored[0][0] - median_iops) < 1e-9,
                      "the baseline's read IOPS is the runs' median", f"{stored} vs {median_iops}")

        # --- List and show. ---------------------------------------------------------
        out = expect_ok("list", ["list"])
        lines = out.splitlines()
        results.check(lines and lines[0].split() == ["JOB", "DEVICE", "PARAMS", "BAND", "RUNS",
                                                      "PINNED", "CREATED", "MODEL"],
                      "list has its header", out)
        row = lines[1].split() if len(lines) > 1 else []
        # A captured baseline is the clean band's.
        results.check(row[:6] == [JOB, device, fnv1a32(fingerprint), "clean", "5", "yes"]
                      and " ".join(row[7:]) == (model or "-"),
                      "list: job, device, params hash, band, runs, pinned, model", out)
        results.check(len(row) > 6 and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", row[6]),
                      "list: created in local ISO 8601 time", out)

        out = expect_ok("show --runs=3", ["show", JOB, "--runs=3"])
        results.check(f"params {fnv1a32(fingerprint)}: " in out, "show prints the params hash",
                      out[:400])
        table = out[out.find("median  spread"):]
        shown = [int(i) for i in re.findall(r"#(\d+)", out.split("median  spread")[0].split("\n\n")[-1])]
        results.check(shown == runs[:3], "show has the newest 3 runs as columns", f"{shown}")
        iops_line = next((l for l in table.splitlines() if l.startswith("read  IOPS")), "")
        newest = store.metric(runs[0], "read", "iops")
        want = f"{median_iops:.0f}  ±"
        results.check(want in iops_line, "show: read IOPS baseline median", f"{want!r} in {iops_line!r}")
        want = f"{newest:.0f} {newest / median_iops:.2f}"
        results.check(want in iops_line, "show: the newest run's IOPS and its ratio",
                      f"{want!r} in {iops_line!r}")
        results.check(all(len(l) <= 100 for l in table.splitlines()), "show fits in 100 columns")
        results.check("Each run: its value, its ratio" in out, "show ends with its legend")

        # --- Export. -------------------------------------------------------------------
        exported = os.path.join(workdir, "golden.json")
        out = expect_ok("export FILE", ["export", exported])
        results.check(out == f"exported 1 baseline to {exported}\n", "export names the file", out)
        with open(exported) as f:
            text = f.read()
        document = json.loads(text)
        b = document["baselines"][0] if document.get("baselines") else {}
        results.check(document.get("iowatch_baselines") == 1 and len(document["baselines"]) == 1
                      and b.get("job") == JOB and b.get("runs") == 5
                      and b.get("fingerprint") == fingerprint,
                      "the export is version 1 JSON with the baseline", text[:300])
        results.check(expect_ok("export to stdout", ["export"]) == text,
                      "export without a file writes the same JSON to stdout")
        results.check(expect_ok("export -", ["export", "-"]) == text, "export - writes to stdout")
        check_export_is_synced(results, iowatch, env, workdir)

        # --- Reset. -----------------------------------------------------------------------
        out = expect_ok("reset", ["reset", JOB])
        results.check(out.startswith(f"deleted 1 baseline of {JOB}"), "reset says it deleted 1",
                      out)
        results.check(store.query("SELECT count(*) FROM baselines") == [(0,)],
                      "the store holds no baseline")
        out = expect_ok("reset again", ["reset", JOB])
        results.check(out == f"no baseline of {JOB} to delete\n", "a second reset deletes none",
                      out)

        # --- Import: a golden baseline ten times faster flags every run. ---------------
        golden = json.loads(text)
        for m in golden["baselines"][0]["metrics"]:
            if m["op"] == "read" and m["metric"] == "iops":
                m["median"] *= 10
        golden_file = os.path.join(workdir, "faster.json")
        with open(golden_file, "w") as f:
            json.dump(golden, f)
        # The daemon's config says which jobs run here: the one of the runs.
        config = write_config(workdir, "iowatch.yaml", [(JOB, PROBE_FILE)])
        described = (f'"{model}"' if model else "disk without a model") + \
            (f" (firmware {disk[2]})" if disk[2] else "")
        out = expect_ok("import FILE", ["import", golden_file, f"--config.file={config}"])
        results.check(out == f"imported 1 baseline from {golden_file} (pinned):\n"
                      f'  job "{JOB}" on {device} ({described}) <- the baseline of job "{JOB}" '
                      f"on {device} in {golden_file}\n",
                      "import says where the baseline went", out)
        rows = store.query("SELECT pinned, run_count FROM baselines WHERE job = ?", JOB)
        results.check(rows == [(1, 5)], "the imported baseline is pinned, with its run count",
                      str(rows))
        out = expect_ok("show after import", ["show", JOB])
        results.check("baseline: imported" in out, "show says the baseline was imported", out[:300])
        iops_lines = [l for l in out.splitlines() if l.startswith("read  IOPS")]
        results.check(sum(l.count("!") for l in iops_lines) == min(10, len(runs)),
                      "every run's read IOPS is marked '!' against a 10x baseline",
                      "\n".join(iops_lines))
        write_lines = [l for l in out.splitlines() if l.startswith("write IOPS")]
        results.check(not any(l for l in write_lines if "!" in l),
                      "write IOPS, unchanged, is not marked", "\n".join(write_lines))

        out = expect_ok("import -", ["import", "-", f"--config.file={config}"], stdin=text)
        results.check(out.startswith("imported 1 baseline from <stdin> (pinned):\n"),
                      "import - reads stdin", out)
        median = store.query("SELECT median FROM baseline_metrics m JOIN baselines b ON "
                             "m.baseline_id = b.id WHERE b.job = ? AND op = 'read' AND "
                             "metric = 'iops'", JOB)
        results.check(median and abs(median[0][0] - median_iops) < 1e-9,
                      "importing the original export replaced the golden one", str(median))

        # --- Golden baselines: another host's job of the same workload. ------------------
        # Named otherwise, probing another file of the same disk: the baseline lands on it.
        other_host = write_config(workdir, "other.yaml",
                                  [("ssd-read", "/var/tmp/store_writer.elsewhere")])
        out = expect_ok("import on a job named otherwise",
                        ["import", golden_file, f"--config.file={other_host}"])
        rows = store.query("SELECT job, device, fingerprint, pinned FROM baselines WHERE job = ?",
                           "ssd-read")
        results.check(len(rows) == 1 and rows[0][1] == device and rows[0][3] == 1
                      and "filename=/var/tmp/store_writer.elsewhere;" in rows[0][2],
                      "the golden baseline is pinned on the other job, its file and this disk",
                      f"{rows} {out!r}")
        # Taken on another model: refused, naming both, and nothing changes.
        foreign = json.loads(text)
        foreign["baselines"][0]["model"] = "Other Disk 2TB"
        foreign_file = os.path.join(workdir, "foreign.json")
        with open(foreign_file, "w") as f:
            json.dump(foreign, f)
        before = store.query("SELECT count(*) FROM baselines")
        expect_error("import of another model's baseline",
                     ["import", foreign_file, f"--config.file={config}"],
                     f'was taken on a "Other Disk 2TB", but job "{JOB}" probes {device}, a '
                     f"{described}: a baseline is pinned only on a disk of the model and "
                     "firmware it was taken on; nothing imported")
        results.check(store.query("SELECT count(*) FROM baselines") == before,
                      "a refused import changes nothing")
        expect_error("import where no job runs the workload", ["import", golden_file],
                     "none of the 1 baselines in")
        store.query("DELETE FROM baselines WHERE job = 'ssd-read'")

        bad = os.path.join(workdir, "bad.json")
        with open(bad, "w") as f:
            f.write('{"iowatch_baselines": 1, "baselines": [{"job": 3}]}\n')
        expect_error("import of a bad document", ["import", bad], f"{bad}:1:")
        results.check(store.query("SELECT count(*) FROM baselines") == [(1,)],
                      "a bad import changes nothing")
        expect_error("import of a missing file", ["import", bad + ".nope"], "cannot open")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
