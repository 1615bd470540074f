#!/usr/bin/env python3
"""Third-party headers that need their library's definitions come in through the project's
wrapper, which refuses to compile without them.

spdlog compiles header-only in a target that does not link spdlog::spdlog (no
SPDLOG_COMPILED_LIB): 8 s of compile per unit instead of 1.2, and a second copy of spdlog in
the binary. common/log.h stops such a build with an #error; this checks that every file
including <spdlog/...> includes common/log.h too, so the #error is reached.

Usage: wrapped_includes.py SOURCE_DIR. Prints every file that bypasses a wrapper; exit 1 if any.
"""
import os
import re
import sys

ROOTS = ("common", "collectors", "advice", "trace", "probes", "config", "daemon", "cli", "tests")
WRAPPERS = {"spdlog/": "common/log.h"}


def bypasses(source):
    for root in ROOTS:
        for folder, _, names in os.walk(os.path.join(source, root)):
            for name in names:
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.relpath(os.path.join(folder, name), source)
                with open(os.path.join(source, path), errors="replace") as f:
                    text = f.read()
                for prefix, wrapper in WRAPPERS.items():
                    if path == wrapper:
                        continue
                    direct = re.search(rf"^\s*#\s*include\s+<{re.escape(prefix)}", text, re.M)
                    wrapped = re.search(rf'^\s*#\s*include\s+"{re.escape(wrapper)}"', text, re.M)
                    if direct and not wrapped:
                        yield path, prefix, wrapper


def main():
    found = list(bypasses(sys.argv[1]))
    for path, prefix, wrapper in found:
        print(f'{path}: includes <{prefix}...> without "{wrapper}"')
    print(f"{len(found)} file(s) bypass a wrapper")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
