#!/usr/bin/python3
"""deploy/iowatch.service against systemd's own tools, and against what the daemon really calls.

1. `systemd-analyze verify` is silent on the unit (ExecStart pointed at the built binary, since
   /usr/bin/iowatch need not exist here), and with the optional process-io drop-in;
2. `systemd-analyze security --offline=true` rates it below 2.0, and below Debian's
   prometheus-node-exporter.service when that is installed (both figures printed);
3. the unit's SystemCallFilter allows every system call the daemon makes: the filter's groups
   are expanded with `systemd-analyze syscall-filter`, then `iowatch serve` runs under strace
   with two probe jobs (psync and io_uring), is scraped (plain and gzip), reloaded with SIGHUP
   and stopped with SIGTERM; a call outside the filter would kill it under systemd
   (SystemCallErrorNumber makes it fail with EPERM instead), so none may appear. The daemon
   runs as `nobody`, as the unit's DynamicUser would (as root, SQLite also calls fchown).
4. The optional drop-ins (deploy/iowatch.service.d/bpf.conf and kmsg.conf): `systemd-analyze
   verify` is silent with each, its exposure is printed beside the base unit's, and its
   capabilities are enough: `iowatch serve` with the collector it is for runs as `nobody`
   holding only the drop-in's capabilities (setpriv: CAP_BPF and CAP_PERFMON; CAP_SYSLOG),
   the collector reads (bpf loads its program; kmsg reads /dev/kmsg under
   kernel.dmesg_restrict), reloads and stops, every system call it makes after its exec
   allowed by the unit with the drop-in applied (skipped, said on stdout, without the kernel's
   BTF for bpf). smart.conf: as it gives them, its capabilities are permitted but in no
   thread's effective set (the daemon holds them for smartctl).

Usage: deploy_systemd.py IOWATCH_BINARY SOURCE_DIR
"""
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import daemon

BPF_CONFIG = "probes:\n  enabled: false\ncollectors:\n  bpf:\n    enabled: true\n"
KMSG_CONFIG = "probes:\n  enabled: false\ncollectors:\n  kmsg:\n    enabled: true\n"
SMART_CONFIG = ("probes:\n  enabled: false\ncollectors:\n  smart:\n    enabled: true\n"
                "    interval: 1s\n")
SMART_CAPS = (1 << 17) | (1 << 21)  # CAP_SYS_RAWIO, CAP_SYS_ADMIN

CONFIG = """\
probes:
  enabled: true
  busy_threshold: 1
  defaults:
    every: 1s
    jitter: 0s
    timeout: 10s
    options: {directory: probes, size: 4M, direct: 1, runtime: 200ms, time_based: 1}
  jobs:
    - name: sys-psync
      options: {rw: randrw, bs: 4k, ioengine: psync}
    - name: sys-uring
      options: {rw: randread, bs: 4k, ioengine: io_uring, iodepth: 4}
"""


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    return p.returncode, (p.stdout + p.stderr).strip()


def exposure(unit):
    code, out = run(["systemd-analyze", "security", "--offline=true", "--no-pager", unit])
    m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", out)
    return (float(m.group(1)) if m else None), out


def expand(groups, seen=None):
    """The system calls named by `groups` (names and @groups), nested groups expanded."""
    seen = set() if seen is None else seen
    calls = set()
    for g in groups:
        if not g.startswith("@"):
            calls.add(g)
            continue
        if g in seen:
            continue
        seen.add(g)
        _, out = run(["systemd-analyze", "syscall-filter", "--no-pager", g])
        for line in out.splitlines()[1:]:
            word = line.strip()
            if not word or word.startswith("#"):
                continue
            calls |= expand([word], seen)
    return calls


def allowed_by(unit_text):
    """The system calls the unit's SystemCallFilter= lines allow, applied in order as systemd
    applies them after an allow list: a plain line adds its calls, a ~ line removes them."""
    allowed = set()
    for line in unit_text.splitlines():
        if not line.startswith("SystemCallFilter="):
            continue
        value = line.split("=", 1)[1].strip()
        if value.startswith("~"):
            allowed -= expand(value[1:].split())
        else:
            allowed |= expand(value.split())
    return allowed


def reload_and_stop(d):
    """SIGHUP, a scrape, SIGTERM to the daemon under its wrapper (the wrapper's child; the
    wrapper exits with its status); the exit code, None if it did not stop within 15 s."""
    traced = int(subprocess.check_output(["pgrep", "-P", str(d.proc.pid)]).split()[0])
    os.kill(traced, signal.SIGHUP)
    time.sleep(1)
    d.scrape()
    os.kill(traced, signal.SIGTERM)
    try:
        return d.proc.wait(15)
    except subprocess.TimeoutExpired:
        return None


def dropin_applied(unit, dropin_path):
    """The unit's text with a drop-in's sections appended: systemd applies a drop-in's
    assignments after the unit's, in order, and so does a second [Service] section."""
    with open(dropin_path) as f:
        return unit.rstrip("\n") + "\n\n" + f.read()


def calls_after_exec(trace_path, binary):
    """Names of the system calls in a full `strace -f` log after the execve of `binary`."""
    used, started = set(), False
    name = re.compile(r"^\d+\s+(?:<\.\.\. )?([a-z_0-9]+)[( ]")
    with open(trace_path, errors="replace") as f:
        for line in f:
            if not started:
                started = f'execve("{binary}"' in line and line.rstrip().endswith("= 0")
                continue
            m = name.match(line)
            if m and m.group(1) not in ("exit", "resumed", "killed"):
                used.add(m.group(1))
    return used


# The optional drop-ins: (file, the capabilities it grants, the system call it adds to the
# filter or None, the daemon's config, the collector that must then read, what the host needs).
DROPINS = [
    ("bpf.conf", "+bpf,+perfmon", "bpf", BPF_CONFIG, "bpf", "/sys/kernel/btf/vmlinux"),
    ("kmsg.conf", "+syslog", None, KMSG_CONFIG, "kmsg", "/dev/kmsg"),
    # No disk with SMART here (virtio): verified and rated, not run (`needs` None).
    ("smart.conf", "+sys_rawio,+sys_admin", "capset", None, "smart", None),
    # No device-mapper in this kernel: verified and rated, not run.
    ("thin-pool.conf", "+sys_admin", "capset", None, "thin_pool", None),
]


def cap_set(status_path, field):
    with open(status_path) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1], 16)
    return None


def check_smart_caps(r, binary, caps):
    """smart.conf's capabilities, given as the unit gives them (nobody, ambient), are held for
    smartctl: permitted and inheritable, in no thread's effective set, not ambient."""
    d = daemon.Daemon(binary, config=SMART_CONFIG, wrapper=[
        "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
        f"--inh-caps=-all,{caps}", f"--ambient-caps=-all,{caps}", f"--bounding-set=-all,{caps}"])
    nobody = pwd.getpwnam("nobody")
    os.chmod(d.dir, 0o755)
    os.chown(d.dir, nobody.pw_uid, nobody.pw_gid)
    d.start(timeout=60)
    try:
        d.scrape_after_next_sample()
        tasks = f"/proc/{d.proc.pid}/task"
        effective = {t: cap_set(f"{tasks}/{t}/status", "CapEff") for t in os.listdir(tasks)}
        main = f"/proc/{d.proc.pid}/status"
        permitted, ambient = cap_set(main, "CapPrm"), cap_set(main, "CapAmb")
        r.check(all(e is not None and e & SMART_CAPS == 0 for e in effective.values())
                and permitted is not None and permitted & SMART_CAPS == SMART_CAPS
                and ambient == 0,
                "with smart.conf's capabilities, no thread of the daemon acts with them: "
                f"permitted {permitted:#x}, ambient {ambient:#x}, effective {effective}",
                d.stderr()[-2000:])
    finally:
        d.close()


def check_dropin(r, binary, source, unit, work, dropin_spec):
    name, caps, call, config, collector, needs = dropin_spec
    dropin = os.path.join(source, "deploy", "iowatch.service.d", name)
    local = os.path.join(work, "iowatch.service")
    dropin_dir = os.path.join(work, "iowatch.service.d")
    os.makedirs(dropin_dir, exist_ok=True)
    shutil.copy(dropin, dropin_dir)
    code, out = run(["systemd-analyze", "verify", local])
    r.check(code == 0 and not out, f"systemd-analyze verify is silent with {name}",
            f"exit {code}: {out}")
    shutil.rmtree(dropin_dir)
    merged = os.path.join(work, f"merged-{name}", "iowatch.service")
    os.makedirs(os.path.dirname(merged))
    with open(merged, "w") as f:
        f.write(dropin_applied(unit, dropin))
    level, detail = exposure(merged)
    print(f"note: systemd-analyze security: iowatch.service with {name} {level}")
    r.check(level is not None and level < 3.0, f"exposure with {name} below 3.0 ({level})",
            detail[-3000:])
    allowed = allowed_by(dropin_applied(unit, dropin))
    if call:
        r.check(call in allowed and call not in allowed_by(unit),
                f"{name} adds {call}() to the filter, the base unit keeps it out")
    if name == "smart.conf":
        check_smart_caps(r, binary, caps)
    if needs is None:
        print(f"note: {name} is verified and rated, not run: no device here to exercise it")
        return
    if not os.path.exists(needs):
        print(f"SKIP {name} run: no {needs} here")
        return
    trace = os.path.join(work, f"strace-{collector}.txt")
    d = daemon.Daemon(binary, config=config, wrapper=[
        "strace", "-f", "-qq", "-o", trace, "setpriv", "--reuid=nobody", "--regid=nogroup",
        "--clear-groups", f"--inh-caps=-all,{caps}", f"--ambient-caps=-all,{caps}",
        f"--bounding-set=-all,{caps}"])
    nobody = pwd.getpwnam("nobody")
    os.chmod(d.dir, 0o755)
    os.chown(d.dir, nobody.pw_uid, nobody.pw_gid)
    d.start(timeout=60)
    try:
        held, samples = d.scrape_until(
            lambda s: daemon.values(s, "iowatch_collector_success", collector=collector) == [1],
            30)
        r.check(held, f"as nobody with only {caps}, the {collector} collector reads",
                d.stderr()[-2000:])
        r.check(reload_and_stop(d) == 0, f"exits 0 with the {collector} collector on",
                d.stderr()[-2000:])
    finally:
        d.close()
    used = calls_after_exec(trace, binary)
    outside = sorted(used - allowed)
    print(f"note: {len(used)} distinct system calls used with the {collector} collector")
    r.check((call is None or call in used) and not outside,
            f"every system call made with the {collector} collector is allowed by unit + {name}",
            f"outside the filter: {outside}")


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    binary, source = os.path.abspath(sys.argv[1]), sys.argv[2]
    if daemon.missing_tools("systemd-analyze", "strace"):
        return 1
    unit_path = os.path.join(source, "deploy", "iowatch.service")
    with open(unit_path) as f:
        unit = f.read()
    r = daemon.Results()
    tempfile.tempdir = "/var/tmp"  # probe files need O_DIRECT; /tmp may be tmpfs
    work = tempfile.mkdtemp(prefix="iowatch-e2e-unit-")
    try:
        # 1. verify (the unit file keeps its name: the name is part of what is checked).
        local = os.path.join(work, "iowatch.service")
        with open(local, "w") as f:
            f.write(unit.replace("/usr/bin/iowatch", binary))
        code, out = run(["systemd-analyze", "verify", local])
        r.check(code == 0 and not out, "systemd-analyze verify is silent", f"exit {code}: {out}")
        # The optional drop-in for /proc/PID/io of every process, applied over the unit.
        dropin_dir = os.path.join(work, "iowatch.service.d")
        os.makedirs(dropin_dir)
        shutil.copy(os.path.join(source, "deploy", "iowatch.service.d", "process-io.conf"),
                    dropin_dir)
        code, out = run(["systemd-analyze", "verify", local])
        r.check(code == 0 and not out, "systemd-analyze verify is silent with the process-io "
                "drop-in", f"exit {code}: {out}")
        shutil.rmtree(dropin_dir)

        # 2. security exposure, ours and node_exporter's. A copy of the unit alone: offline
        # analysis applies the drop-ins of an iowatch.service.d beside it (deploy/ has two).
        bare = os.path.join(work, "bare", "iowatch.service")
        os.makedirs(os.path.dirname(bare))
        shutil.copy(unit_path, bare)
        ours, detail = exposure(bare)
        print(f"note: systemd-analyze security: iowatch.service {ours}")
        r.check(ours is not None and ours < 2.0, f"exposure below 2.0 ({ours})", detail[-3000:])
        theirs_unit = "/lib/systemd/system/prometheus-node-exporter.service"
        if os.path.exists(theirs_unit):
            theirs, _ = exposure(theirs_unit)
            print(f"note: systemd-analyze security: prometheus-node-exporter.service {theirs}")
            r.check(ours is not None and theirs is not None and ours < theirs,
                    f"exposure below node_exporter's packaged unit ({ours} < {theirs})")

        # 3. every system call the daemon makes is allowed.
        allowed = allowed_by(unit)
        r.check({"io_uring_setup", "io_uring_enter", "io_uring_register"} <= allowed,
                "the filter allows io_uring", str(sorted(allowed))[:500])
        trace = os.path.join(work, "strace.txt")
        # As the unit runs it: an unprivileged user (DynamicUser), never root.
        d = daemon.Daemon(binary, config=CONFIG, wrapper=[
            "strace", "-f", "-qq", "-c", "-U", "name", "-o", trace, "-u", "nobody"])
        nobody = pwd.getpwnam("nobody")
        os.chmod(d.dir, 0o755)
        os.chown(d.dir, nobody.pw_uid, nobody.pw_gid)
        # nobody must reach the binary: a checkout under a 0700 directory (`mktemp -d`) is
        # out of its reach, and strace then fails with "exec: Permission denied".
        d.binary = shutil.copy(binary, os.path.join(d.dir, "iowatch"))
        d.start(timeout=30)
        try:
            deadline = time.monotonic() + 30
            runs = 0
            while time.monotonic() < deadline and runs < 4:
                samples = d.scrape()
                runs = daemon.completed_runs(samples)
                time.sleep(0.3)
            r.check(runs >= 4, f"both engines probed under strace ({runs:.0f} ok runs)",
                    d.stderr()[-2000:])
            d.get("/metrics", headers={"Accept-Encoding": "gzip"})
            d.get("/")
            r.check(reload_and_stop(d) == 0, "exits 0 under strace", d.stderr()[-2000:])
        finally:
            d.close()
        with open(trace) as f:
            used = {line.split()[-1] for line in f.read().splitlines()
                    if line.strip() and not line.startswith(("-", "%", " ", "syscall", "total"))}
        used.discard("total")
        outside = sorted(used - allowed)
        print(f"note: {len(used)} distinct system calls used")
        r.check(used and not outside, "every system call the daemon made is allowed by the unit",
                f"outside the filter: {outside}")

        # 4. the optional drop-ins.
        for spec in DROPINS:
            check_dropin(r, binary, source, unit, work, spec)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
