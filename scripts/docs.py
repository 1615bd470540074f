#!/usr/bin/env python3
"""Writes the parts of the docs that come from the sources' folders.

A source of the sample is one folder (daemon/sources/<name>/) and one line in
daemon/sources/registry.cc. What a document says of a source lives in a file of
that folder (a fragment: daemon/sources/<name>/metrics.md holds its rows of the
metrics reference), and this script writes the fragments, in registry.cc's
order, into the documents users read, between two marker lines:

    <!-- BEGIN GENERATED <region>: ... -->
    ...
    <!-- END GENERATED <region> -->

(`# BEGIN GENERATED ...` in YAML). A region may have a template (a file with
the lines around the sources' fragments): its line `@SOURCES@` becomes the
fragments, and `@COLLECTORS@` the sources' `collector` label values, in order,
joined by `\\|` (read from each source's `kCollectors[]`, the list its
descriptor registers).

REGIONS is the list of (target file, region, fragment name, template): another
document with per-source parts is one more entry (and its marker lines).

Usage:
  scripts/docs.py           rewrite the regions that differ; prints the files rewritten
  scripts/docs.py --check   rewrite nothing; print a diff for each file that differs
                            and exit 1 (the ctest test docs.generated)
Python 3 standard library only.
"""
import argparse
import difflib
import pathlib
import re
import sys
from typing import NamedTuple


class Region(NamedTuple):
    target: str  # the document, relative to the source tree
    name: str  # the region's name in its marker lines
    fragment: str  # the file each source's folder may have
    template: str | None = None  # the file around the fragments, with @SOURCES@


REGIONS = [
    Region("docs/metrics.md", "metric-families", "metrics.md", "daemon/metrics/metrics.md"),
    Region("docs/configuration.md", "source-keys", "configuration.md",
           "daemon/sources/configuration.md"),
    Region("config/iowatch.yaml", "source-settings", "iowatch.yaml"),
]

SOURCES_DIR = "daemon/sources"
REGISTRY = "daemon/sources/registry.cc"
COMMENT = {".md": ("<!-- ", " -->"), ".yaml": ("# ", ""), ".yml": ("# ", "")}


class DocsError(Exception):
    pass


def registered_sources(root):
    """The source folders in registry.cc's order: each `FooSourceDescriptor()` of
    its list, found by the header of daemon/sources/<name>/ that declares it."""
    registry = (root / REGISTRY).read_text()
    listed = re.search(r"kSources\[\]\s*=\s*\{(.*?)\};", registry, re.S)
    if not listed:
        raise DocsError(f"{REGISTRY}: no `kSources[] = {{...}};` list")
    declared = {}
    for header in sorted((root / SOURCES_DIR).glob("*/*.h")):
        for function in re.findall(r"SourceDescriptor&\s+(\w+)\(\);", header.read_text()):
            declared[function] = header.parent
    folders = []
    for function in re.findall(r"(\w+)\(\)", listed.group(1)):
        if function not in declared:
            raise DocsError(f"{REGISTRY}: {function}() is declared by no header of "
                            f"{SOURCES_DIR}/*/")
        folders.append(declared[function])
    return folders


def collectors_of(root, folder):
    """The `collector` label values the source's descriptor registers."""
    for source in sorted(folder.glob("*.cc")):
        found = re.search(r"kCollectors\[\]\s*=\s*\{([^}]*)\}", source.read_text())
        if found:
            return re.findall(r'"([^"]*)"', found.group(1))
    raise DocsError(f"{folder.relative_to(root)}: no `kCollectors[] = {{...}}` in its .cc files")


def fragment_text(path):
    """A fragment's text without its leading <!-- note to its editors -->."""
    text = path.read_text()
    if path.suffix == ".md":
        text = re.sub(r"\A\s*<!--.*?-->\n", "", text, flags=re.S)
    return text.rstrip("\n")


def region_text(root, region, folders):
    fragments = [folder / region.fragment for folder in folders]
    body = "\n".join(fragment_text(f) for f in fragments if f.exists())
    if region.template is None:
        return body
    template = fragment_text(root / region.template)
    if template.splitlines().count("@SOURCES@") != 1:
        raise DocsError(f"{region.template}: needs one line `@SOURCES@`")
    collectors = "\\|".join(c for folder in folders for c in collectors_of(root, folder))
    return template.replace("@SOURCES@", body).replace("@COLLECTORS@", collectors)


def markers(region):
    start, end = COMMENT[pathlib.PurePath(region.target).suffix]
    sources = f"{SOURCES_DIR}/*/{region.fragment}"
    if region.template:
        sources = f"{region.template} around {sources}"
    begin = (f"{start}BEGIN GENERATED {region.name}: written by scripts/docs.py from "
             f"{sources}; edit those, then run scripts/docs.py{end}")
    return begin, f"{start}END GENERATED {region.name}{end}"


def replace_region(text, region, body):
    """The text with the region's lines, between its marker lines, made `body`;
    the BEGIN line is rewritten too (it names the region's files)."""
    begin, end = markers(region)
    start = re.escape(begin[:begin.index(region.name) + len(region.name)])
    found = re.search(rf"^{start}\b[^\n]*\n(.*?\n)?{re.escape(end)}$", text, re.M | re.S)
    if not found:
        raise DocsError(f"{region.target}: no marker lines\n  {begin}\n  {end}")
    return text[:found.start()] + f"{begin}\n{body}\n{end}" + text[found.end():]


def generated(root):
    """{target: (its text now, its text generated)} for every target of REGIONS."""
    folders = registered_sources(root)
    before, after = {}, {}
    for region in REGIONS:
        if region.target not in before:
            before[region.target] = after[region.target] = (root / region.target).read_text()
        body = region_text(root, region, folders)
        after[region.target] = replace_region(after[region.target], region, body)
    return {target: (before[target], after[target]) for target in before}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; diff, exit 1")
    parser.add_argument("--root", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    try:
        files = generated(args.root)
    except DocsError as error:
        print(f"scripts/docs.py: {error}", file=sys.stderr)
        return 2
    stale = [t for t, (now, new) in files.items() if now != new]
    for target in stale:
        now, new = files[target]
        if args.check:
            sys.stdout.writelines(difflib.unified_diff(
                now.splitlines(True), new.splitlines(True), f"{target} (checked in)",
                f"{target} (scripts/docs.py)"))
        else:
            (args.root / target).write_text(new)
            print(f"rewrote {target}")
    if args.check and stale:
        print(f"\n{', '.join(stale)}: not what scripts/docs.py makes from the sources' "
              "folders. Edit the fragments its markers name, then run: python3 scripts/docs.py",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
