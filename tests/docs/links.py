#!/usr/bin/env python3
"""Every relative link in README.md and docs/*.md resolves.

A link [text](path) or [text](path#anchor) outside code must name a file of the source tree,
relative to the document; an anchor must be a heading of the target document, as GitHub spells
its anchors (lower case, punctuation but '-' and '_' dropped, spaces as '-', a repeated heading
suffixed -1, -2, ...). Web links (http:, https:, mailto:) are not followed.

Every alert of deploy/prometheus/*.yml (its tests aside) has a `runbook` annotation naming a
heading of docs/operations.md that resolves, as a link would.

Usage: links.py SOURCE_DIR. Prints each broken link as FILE:LINE: link: why; exit 1 if any.
"""
import pathlib
import re
import sys

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text):
    """(line number, line) outside fenced code, with inline code spans blanked."""
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), line)


def slug(heading):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen = {}
    result = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").split("\n"):
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def check(source_dir):
    documents = [source_dir / "README.md"] + sorted((source_dir / "docs").glob("*.md"))
    errors = []
    cache = {}
    for document in documents:
        text = document.read_text(encoding="utf-8")
        for number, line in prose_lines(text):
            for match in LINK.finditer(line):
                target = match.group(1)
                if re.match(r"^[a-z]+:", target):
                    continue
                path_part, _, anchor = target.partition("#")
                where = f"{document.relative_to(source_dir)}:{number}: {target}"
                resolved = (document.parent / path_part).resolve() if path_part else document
                if not resolved.exists():
                    errors.append(f"{where}: no such file {resolved}")
                    continue
                if not anchor:
                    continue
                if resolved.suffix != ".md":
                    errors.append(f"{where}: an anchor into a file that is not Markdown")
                    continue
                missing_anchor(where, resolved, anchor, cache, source_dir, errors)
    return documents, errors


def missing_anchor(where, resolved, anchor, cache, source_dir, errors):
    """Notes in `errors` that the Markdown file `resolved` has no heading `anchor`."""
    if resolved not in cache:
        cache[resolved] = anchors(resolved)
    if anchor not in cache[resolved]:
        errors.append(f"{where}: no heading with the anchor #{anchor} in "
                      f"{resolved.relative_to(source_dir)}")


def check_runbooks(source_dir):
    """The runbook of each alert in the shipped rule files resolves to a heading."""
    errors = []
    cache = {}
    for rules in sorted((source_dir / "deploy" / "prometheus").glob("*.yml")):
        if rules.name.endswith("_test.yml"):
            continue
        alert = None
        lines = rules.read_text(encoding="utf-8").split("\n")
        for number, line in enumerate(lines + ["- alert: (end)"], 1):
            if (match := re.match(r"^\s*- (alert|record):\s*(\S+)", line)):
                if alert:
                    errors.append(f"{rules.relative_to(source_dir)}:{alert[1]}: alert {alert[0]} "
                                  "has no runbook annotation")
                alert = (match.group(2), number) if match.group(1) == "alert" else None
                continue
            match = re.match(r"^\s*runbook:\s*(\S+)\s*$", line)
            if not match or not alert:
                continue
            target = match.group(1)
            where = f"{rules.relative_to(source_dir)}:{number}: {target}"
            path_part, _, anchor = target.partition("#")
            resolved = (source_dir / path_part).resolve()
            alert = None
            if not resolved.is_file():
                errors.append(f"{where}: no such file {resolved}")
                continue
            missing_anchor(where, resolved, anchor, cache, source_dir, errors)
    return errors


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().split("\n")[-1], file=sys.stderr)
        return 2
    source_dir = pathlib.Path(sys.argv[1]).resolve()
    documents, errors = check(source_dir)
    errors += check_runbooks(source_dir)
    for error in errors:
        print(error)
    print(f"{len(documents)} documents, {len(errors)} broken links")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
