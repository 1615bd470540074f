#!/usr/bin/env python3
"""The include graph of the project's own code has no loop, at two levels.

Headers: no header reaches itself through its #include "..." lines (a loop
that include guards hide and a forward declaration papered over). Libraries:
collapsing each file into its library (the nearest folder whose
CMakeLists.txt defines one: collectors/cgroup/'s only adds its files to
collectors/' library), no
library reaches itself either, so dependencies point one way ("no folder importing a
folder above it", DESIGN.md). Both counted over common/, collectors/, advice/,
trace/, probes/, config/, daemon/ and cli/ (tests and benchmarks may reach anywhere).

Usage: include_graph.py SOURCE_DIR. Prints every loop found; exit 1 if any.
"""
import os
import re
import sys

ROOTS = ("common", "collectors", "advice", "trace", "probes", "config", "daemon", "cli")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def project_files(source):
    for root in ROOTS:
        for folder, _, names in os.walk(os.path.join(source, root)):
            for name in names:
                if name.endswith((".h", ".cc")):
                    yield os.path.relpath(os.path.join(folder, name), source)


def graph(source):
    files = set(project_files(source))
    edges = {}
    for path in files:
        with open(os.path.join(source, path), errors="replace") as f:
            edges[path] = {inc for inc in INCLUDE.findall(f.read()) if inc in files}
    return edges


def cycles(edges):
    """Every elementary loop's nodes, one per strongly connected component of
    more than one node (or a node that includes itself)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in edges.get(v, ()):
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def defines_library(source, folder):
    path = os.path.join(source, folder, "CMakeLists.txt")
    if not os.path.exists(path):
        return False
    with open(path, errors="replace") as f:
        return re.search(r"^\s*add_(library|executable)\(", f.read(), re.M) is not None


def library_of(source, path):
    folder = os.path.dirname(path)
    while folder and not defines_library(source, folder):
        folder = os.path.dirname(folder)
    return folder


def libraries(source, edges):
    out = {}
    for path, incs in edges.items():
        mine = library_of(source, path)
        out.setdefault(mine, set()).update(library_of(source, i) for i in incs)
        out[mine].discard(mine)
    return out


def main():
    source = sys.argv[1]
    edges = graph(source)
    header_loops = cycles({p: i for p, i in edges.items() if p.endswith(".h")})
    units = libraries(source, edges)
    folder_loops = cycles(units)
    for loop in header_loops:
        print("header loop: " + " -> ".join(loop))
    for loop in folder_loops:
        print("library loop: " + " <-> ".join(loop))
    headers = sum(p.endswith(".h") for p in edges)
    print(f"{len(edges)} files ({headers} headers) in {len(units)} libraries: "
          f"{len(header_loops)} header loops, {len(folder_loops)} library loops")
    return 1 if header_loops or folder_loops else 0


if __name__ == "__main__":
    sys.exit(main())
