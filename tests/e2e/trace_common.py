"""What e2e.trace and e2e.trace_hostile share: running a command, `iowatch trace -o json`, and
finding a file in a process's report."""
import json
import os
import subprocess


def run(argv, env=None, timeout=120, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, **kwargs)


def trace_json(iowatch, workdir, argv, extra=(), env=None, timeout=120):
    """(the CompletedProcess of `iowatch trace -o json --output FILE ... -- argv`, FILE's JSON)."""
    out = os.path.join(workdir, "report.json")
    if os.path.exists(out):
        os.unlink(out)
    p = subprocess.run([iowatch, "trace", "--output-format=json", "--output", out, *extra, "--",
                        *argv], capture_output=True, timeout=timeout, env=env)
    p.stdout, p.stderr = (p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"))
    if not os.path.exists(out):
        return p, {"processes": []}
    with open(out) as f:
        return p, json.load(f)


def file_of(process, path):
    return next((f for f in process["files"] if f["path"] == path), None)


def files_named(doc, path):
    """The path's entries across every process of a report."""
    return [f for process in doc["processes"] for f in process["files"] if f["path"] == path]
