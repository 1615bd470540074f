#!/usr/bin/python3
"""The Debian package: built by CPack from the install rules, installed with dpkg, used from the
installed paths, purged (root).

1. `cpack -G DEB` in the build directory makes iowatch_<version>_<arch>.deb; dpkg-deb shows
   its Depends (from dpkg-shlibdeps), the conffile /etc/iowatch/iowatch.yaml and the files;
2. `dpkg -i` installs it; `/usr/bin/iowatch --version` prints the version, `iowatch trace`
   finds /usr/lib/iowatch/libiowatch-trace.so and traces cat, `iowatch
   check-config /etc/iowatch/iowatch.yaml` accepts the installed config, `systemd-analyze
   verify` accepts the installed unit as it is (ExecStart=/usr/bin/iowatch now exists), the
   docs, alert rules and dashboard are where docs/operations.md says;
3. `dpkg --purge` removes every file it installed.
Skips (77) when not root, or when an iowatch package is already installed (it would be
replaced: this test never touches an operator's installation).

Usage: deploy_deb.py BUILD_DIR VERSION
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

import daemon

EXPECTED = [
    "/usr/bin/iowatch",
    "/usr/lib/iowatch/libiowatch-trace.so",
    "/usr/lib/systemd/system/iowatch.service",
    "/etc/iowatch/iowatch.yaml",
    "/usr/share/doc/iowatch/README.md",
    "/usr/share/doc/iowatch/operations.md",
    "/usr/share/doc/iowatch/metrics.md",
    "/usr/share/doc/iowatch/LICENSE",
    "/usr/share/iowatch/prometheus/alerts.yml",
    "/usr/share/iowatch/prometheus/alerts_test.yml",
    "/usr/share/iowatch/prometheus/scrape.yml",
    "/usr/share/iowatch/prometheus/fleet.rules.yml",
    "/usr/share/iowatch/alertmanager/alertmanager.yml",
    "/usr/share/iowatch/grafana/iowatch.json",
    "/usr/share/iowatch/systemd/process-io.conf",
    "/usr/share/iowatch/systemd/bpf.conf",
    "/usr/share/iowatch/systemd/kmsg.conf",
    "/usr/share/iowatch/systemd/smart.conf",
    "/usr/share/iowatch/systemd/thin-pool.conf",
]


def run(argv, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kw)
    return p.returncode, (p.stdout + p.stderr).strip()


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    build, version = os.path.abspath(sys.argv[1]), sys.argv[2]
    daemon.require_root("installing a package")
    code, _ = run(["dpkg-query", "-W", "-f=${Status}", "iowatch"])
    if code == 0:
        print("SKIP: an iowatch package is installed; not replacing it")
        return 77
    r = daemon.Results()
    out_dir = tempfile.mkdtemp(prefix="iowatch-e2e-deb-", dir="/var/tmp")
    installed = False
    try:
        code, out = run(["cpack", "-G", "DEB", "-B", out_dir, "--config",
                         os.path.join(build, "CPackConfig.cmake")], cwd=build)
        debs = glob.glob(os.path.join(out_dir, "iowatch_*.deb"))
        r.check(code == 0 and len(debs) == 1, "cpack -G DEB makes one .deb", out[-3000:])
        if not debs:
            return r.finish()
        deb = debs[0]
        r.check(os.path.basename(deb).startswith(f"iowatch_{version}_"),
                f"named for version {version} ({os.path.basename(deb)})")
        _, info = run(["dpkg-deb", "--info", deb])
        depends = next((l for l in info.splitlines() if l.strip().startswith("Depends:")), "")
        r.check("libc6" in depends and "liburing" in depends and "libsqlite3" in depends,
                "Depends lists the shared libraries (dpkg-shlibdeps)", depends)
        _, listing = run(["dpkg-deb", "--contents", deb])
        for path in EXPECTED:
            r.check("." + path in listing, f"the package holds {path}")

        code, out = run(["dpkg", "-i", deb])
        installed = code == 0
        r.check(installed, "dpkg -i installs it", out[-3000:])
        if not installed:
            return r.finish()
        code, out = run(["/usr/bin/iowatch", "--version"])
        r.check(code == 0 and version in out, f"/usr/bin/iowatch --version ({out})")
        code, out = run(["/usr/bin/iowatch", "trace", "--", "cat", "/etc/iowatch/iowatch.yaml"])
        r.check(code == 0 and "Trace close : program <-> os : /etc/iowatch/iowatch.yaml" in out,
                "the installed iowatch trace finds the installed library", out[-800:])
        code, out = run(["/usr/bin/iowatch", "check-config", "/etc/iowatch/iowatch.yaml"])
        r.check(code == 0, "iowatch check-config /etc/iowatch/iowatch.yaml", out)
        if shutil.which("systemd-analyze"):
            code, out = run(["systemd-analyze", "verify", "/usr/lib/systemd/system/iowatch.service"])
            r.check(code == 0 and not out, "systemd-analyze verify on the installed unit",
                    f"exit {code}: {out}")
        _, status = run(["dpkg-query", "-W", "-f=${Conffiles}", "iowatch"])
        r.check("/etc/iowatch/iowatch.yaml" in status, "the config is a conffile", status)
        _, files = run(["dpkg", "-L", "iowatch"])
        for path in EXPECTED:
            r.check(path in files.splitlines() and os.path.exists(path), f"installed: {path}")

        code, out = run(["dpkg", "--purge", "iowatch"])
        installed = code != 0
        r.check(code == 0, "dpkg --purge removes it", out[-2000:])
        left = [p for p in EXPECTED if os.path.exists(p)]
        r.check(not left, "no file left after the purge", str(left))
        r.check(not os.path.exists("/etc/iowatch"), "/etc/iowatch removed")
    finally:
        if installed:
            run(["dpkg", "--purge", "iowatch"])
        shutil.rmtree(out_dir, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
