#!/usr/bin/python3
"""The iowatch binary does not link the libraries it loads only when a command needs them,
nor those whose few calls it makes itself.

libcurl is dlopen'ed by the first push (daemon/metrics/push/curl_library.h): linked, it
mapped libcurl and 25 libraries under it into every process, `iowatch serve` included
(about 4 MiB of resident memory). libsystemd was linked for sd_notify alone, now written out
(daemon/serve/systemd_notify.h), and brought six libraries under it (about 0.5 MiB). This
reads the binary's DT_NEEDED entries (readelf -d) and fails if one of them is back.

Usage: linked_libraries.py IOWATCH
"""
import re
import subprocess
import sys

NOT_LINKED = {"libcurl": "daemon/metrics/push/curl_library.h: loaded by the first push",
              "libsystemd": "daemon/serve/systemd_notify.h: the notify protocol is written out"}


def needed(binary):
    out = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout)


def main():
    libraries = needed(sys.argv[1])
    if not libraries:
        sys.exit(f"{sys.argv[1]}: no NEEDED entries read (not a dynamic executable?)")
    bad = [(lib, why) for lib in libraries for prefix, why in NOT_LINKED.items()
           if lib.startswith(prefix + ".so")]
    print(f"{sys.argv[1]} links {len(libraries)} libraries: {', '.join(libraries)}")
    for lib, why in bad:
        print(f"FAIL {lib} is linked; it must not be ({why})")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
