#!/usr/bin/python3
"""What clang-tidy's verdict on a file depends on, as one hash per file.

The hash covers the file's preprocessed text (clang -E -P: every header it
includes, project and system, after macros; no line markers, __FILE__ relative
to the source tree), the .clang-tidy configuration and clang-tidy's version.
Two checkouts with the same hash for a file get the same findings for it, so a
file whose hash matches the record of a clean whole-tree run needs no new run.

Usage: tidy_inputs.py BUILD_DIR FILE...   prints "HASH FILE" per file (FILE relative
                                          to the source tree), in the order given
"""
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shared_inputs():
    h = hashlib.sha256()
    with open(os.path.join(SOURCE, ".clang-tidy"), "rb") as f:
        h.update(f.read())
    h.update(subprocess.run(["clang-tidy-19", "--version"], capture_output=True,
                            check=True).stdout)
    return h.digest()


def preprocess_argv(entry):
    argv = shlex.split(entry["command"])
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "-o":
            skip = True
        elif arg != "-c":
            out.append(arg)
    return out + ["-E", "-P", f"-fmacro-prefix-map={SOURCE}/=", "-o", "-"]


def file_hash(entry, shared):
    run = subprocess.run(preprocess_argv(entry), cwd=entry["directory"], capture_output=True)
    if run.returncode != 0:
        raise RuntimeError(f"{entry['file']}: preprocessing failed:\n{run.stderr.decode()}")
    return hashlib.sha256(shared + run.stdout).hexdigest()


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(os.path.join(sys.argv[1], "compile_commands.json")) as f:
        entries = {os.path.realpath(e["file"]): e for e in json.load(f)}
    files = [os.path.relpath(os.path.realpath(p), SOURCE) for p in sys.argv[2:]]
    missing = [p for p in files if os.path.join(SOURCE, p) not in entries]
    if missing:
        print(f"tidy_inputs.py: not in {sys.argv[1]}/compile_commands.json: {' '.join(missing)}",
              file=sys.stderr)
        return 2
    shared = shared_inputs()
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        hashes = list(pool.map(lambda p: file_hash(entries[os.path.join(SOURCE, p)], shared),
                               files))
    for path, digest in zip(files, hashes):
        print(digest, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
