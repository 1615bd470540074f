#!/usr/bin/python3
"""The fleet in simulation, end to end on Debian's VictoriaMetrics 1.79:
fleet_simulation writes a synthetic fleet's probe series (each disk judged by the daemon's own
judge), which are imported into a `victoria-metrics` server on a temporary directory; `vmalert
-replay` evaluates deploy/prometheus/fleet.rules.yml and alerts.yml over the whole span at the
bundled 15 min interval, writing the recorded series and ALERTS back; the alerts are then scored
against the ground truth of the injected faults (fleet_score.py) and printed as Markdown.

  run.py FLEET_SIMULATION [--hosts 1000] [--days 30] [--seed 28] [--gradual 20] [--abrupt 5]
         [--gradual-loss 0.02,0.05] [--abrupt-loss 0.40,0.60] [--load afternoon|night] [--steal diurnal|bursts|none]
         [--passive-window 1] [--threads 2] [--short] [--check]

--load, --steal: the fleet's mix of others' load and the hypervisor's steal (fleet_simulation's
options, diurnal_disk.h): an afternoon peak of load or a night batch (01:00-05:00 UTC); steal
rising with the afternoon, in random bursts of minutes to an hour, or none. With another --seed,
a fleet the judge was not tuned on.

--passive-window: the passive judge's window in minutes on each disk's own reads (1, the
daemon's; 0: none; longer is cheaper); its series are imported beside the probes' and its own
raises scored (fleet_score.py).

--short: 20 hosts, 7 days, 3 gradual faults (8-12 % a day) and 2 abrupt ones, passive windows of
5 minutes, for ctest;
--check: exit 1 unless the issue's goals hold (every fault detected by a per-disk rule, the
abrupt ones within 2 h, the firmware update as one model alert and no peer alert on its disks,
at most 1 false alarm per 1,000 host-days for each per-disk rule, with keep_firing_for).

How the rules run here:
- Debian's vmalert 1.79 rejects `keep_firing_for:` (later vmalerts accept it): the rule files are
  copied and those lines removed. What it changes: an alert whose expression stops holding for
  one evaluation ends at once and, if it holds again, waits its `for:` anew, where an engine
  with keep_firing_for keeps it firing (15 min for the peer alerts, 30 for the model alert).
  The score gives both: as replayed, and as an engine with keep_firing_for would fire
  (fleet_score.py derives it from the alerts' pending and firing samples).
- vmalert -replay evaluates a group's rules one after another over the whole range, each rule's
  results reaching the store asynchronously (-replay.rulesDelay is a fixed sleep). A chained
  rule must see the whole of the rule before it, so each rule is replayed by its own vmalert
  run, in the files' order, and the store flushed (/internal/force_flush) before the next:
  the same evaluation, without a race. One range query per rule with a `for:` (so that none
  restarts at a chunk's edge; points_per_query), a day per query for the others; the step is
  the 15 min interval (-datasource.queryStep, whose 5 min default vmalert 1.79 also uses as the
  replay's step).
- The series are gauges sampled at every evaluation point (the last run's values, as a scrape
  of the daemon reads them). A series gone from one evaluation must be gone from the store at
  it, as the staleness markers vmagent (a vanished scraped series) and a live vmalert (a
  vanished recorded one) write make it; replay writes none, and VictoriaMetrics' implicit
  lookbehind (1.125 × a series' sample spacing) would show each series one evaluation longer:
  a recorded peer_input of a run since contended, a peer_margin of a run since fine, and a
  peer alert's `for: 30m` (three evaluations) met by a single slow run two rules down the
  chain. -search.maxStalenessInterval=15m (the interval) caps the lookbehind at one step:
  each evaluation sees the samples of its own time only, as live.
"""
import argparse
import http.client
import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from contextlib import ExitStack

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import daemon  # noqa: E402  (the e2e tests' helpers)
import promstack  # noqa: E402  (their server runner: loopback, killed with us)

import fleet_score  # noqa: E402

RECORDING = os.path.join(ROOT, "tests", "bench", "verdicts", "recordings", "quiet",
                         "iowatch.db.xz")
RULE_FILES = ("fleet.rules.yml", "alerts.yml")
INTERVAL = "15m"
# --short --check: the goals the short fleet misses, each with its cause. The check is that the
# goals missed are exactly these: a new miss fails, and so does one that closes (update the
# list, and docs/benchmarks.md's "The fleet in simulation" with it).
KNOWN_GAPS = {}
SHORT_KNOWN_GAPS = KNOWN_GAPS  # every other goal met at the short scale


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("generator", help="the fleet_simulation binary")
    p.add_argument("--hosts", type=int, default=1000)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--seed", type=int, default=28)
    p.add_argument("--gradual", type=int, default=20)
    p.add_argument("--abrupt", type=int, default=5)
    p.add_argument("--gradual-loss", default="0.02,0.05")
    p.add_argument("--abrupt-loss", default="0.40,0.60",
                   help="IOPS lost at once by an abrupt fault, drawn uniformly between")
    p.add_argument("--load", choices=("afternoon", "night"), default="afternoon",
                   help="others' load: an afternoon peak, or a night batch 01:00-05:00 UTC")
    p.add_argument("--steal", choices=("diurnal", "bursts", "none"), default="diurnal",
                   help="the hypervisor's steal: with the afternoon, in random bursts of "
                   "minutes to an hour (each host's own, from the seed), or none")
    p.add_argument("--passive-window", type=int,
                   help="the passive judge's window in minutes (default 1, 2 with --short; 0: "
                   "no passive series)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--short", action="store_true")
    p.add_argument("--check", action="store_true")
    p.add_argument("--data-dir", help="where the series and truth are written, and read from "
                   "if they are there already (the full fleet takes hours to generate)")
    p.add_argument("--keep", action="store_true",
                   help="keep the temporary directory (the store, the rules, truth.json)")
    a = p.parse_args()
    if a.passive_window is None and not a.short:
        a.passive_window = 1
    if a.short:
        a.hosts, a.days, a.gradual, a.abrupt, a.gradual_loss = 20, 7, 3, 2, "0.08,0.12"
        # Minute windows would cost the short run a third more CPU (800,000 windows through the
        # passive judge); two-minute ones about a tenth (3 s), under the same rules (two hours
        # to learn, six minutes to raise).
        if a.passive_window is None:
            a.passive_window = 2
    return a


def unpack_recording(work):
    """The quiet recording's store, whose clean runs give the simulated runs their noise."""
    path = os.path.join(work, "quiet.db")
    with lzma.open(RECORDING) as f, open(path, "wb") as out:
        shutil.copyfileobj(f, out)
    return path


def end_time():
    """The last midnight (UTC) at least 10 min ago: near now (VictoriaMetrics' queries leave out
    the last 30 s), and the same time of day whenever it runs, so that the diurnal load meets
    the faults at the same hours and a seed gives the same figures any day."""
    return (int(time.time()) - 600) // 86400 * 86400


def victoria_metrics(work):
    return promstack.Server(work, "victoria-metrics", "", lambda port: [
        "victoria-metrics", f"-storageDataPath={work}/vm-data", f"-httpListenAddr=127.0.0.1:{port}",
        "-retentionPeriod=100y", "-search.disableCache", f"-search.maxStalenessInterval={INTERVAL}",
        # A replayed rule writes each series' whole month at once: 50 MB and more per request
        # with 1,000 hosts, over the 32 MB default, which the server refuses (and vmalert
        # drops after its retries).
        "-maxInsertRequestSize=1073741824", "-loggerLevel=WARN"])


def refused_writes(vm):
    """The store's complaints about writes it refused: a replay that lost its results must not
    be scored."""
    return [line for line in vm.log().splitlines()
            if "vminsert" in line and ("mustn't exceed" in line or "cannot" in line)]


def wait_ready(port, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("victoria-metrics did not answer /health")


def flush(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/internal/force_flush", timeout=600):
        pass


def generate(cmd, log_path):
    """Runs fleet_simulation (its progress in log_path); returns its summary and the seconds it
    took."""
    began = time.monotonic()
    with open(log_path, "w") as log:
        code = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=log).returncode
    with open(log_path) as log:
        said = log.read()
    if code != 0:
        raise RuntimeError(f"fleet_simulation failed:\n{said}")
    return said, time.monotonic() - began


def import_file(port, path):
    """Streams the JSON lines file into /api/v1/import (chunked); returns the seconds taken,
    the store flushed."""
    began = time.monotonic()
    with open(path, "rb") as f:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
        conn.request("POST", "/api/v1/import", body=iter(lambda: f.read(1 << 20), b""),
                     encode_chunked=True, headers={"Content-Type": "application/json"})
        reply = conn.getresponse()
        body = reply.read().decode(errors="replace")
    if reply.status not in (200, 204):
        raise RuntimeError(f"/api/v1/import: {reply.status} {body}")
    flush(port)
    return time.monotonic() - began


def prepare_rules(work):
    """The rule files without keep_firing_for, one file per rule in order (group kept), and
    each alert's `for` and `keep_firing_for` in seconds."""
    rules, timing = [], {}
    for name in RULE_FILES:
        with open(os.path.join(ROOT, "deploy", "prometheus", name)) as f:
            text = f.read()
        timing.update(alert_timing(text))
        text = re.sub(r"^ *keep_firing_for: .*\n", "", text, flags=re.M)
        rules += split_rules(text, work, name)
    return rules, timing


def seconds(text):
    return sum(int(n) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[u]
               for n, u in re.findall(r"(\d+)([smhd])", text))


def alert_timing(text):
    timing, current = {}, None
    for line in text.splitlines():
        m = re.match(r"^ *- alert: (\S+)", line)
        if m:
            current = m.group(1)
            timing[current] = [0, 0]
        elif current and (m := re.match(r"^ +(for|keep_firing_for): (\S+)", line)):
            timing[current][0 if m.group(1) == "for" else 1] = seconds(m.group(2))
    return {k: tuple(v) for k, v in timing.items()}


def without_annotations(rule):
    """A rule's lines without its `annotations:` block: vmalert's replay mode cannot run their
    `query` templates (the alerts' explanations), and the score reads only when alerts fire."""
    kept, skipping = [], False
    for line in rule:
        if re.match(r"^        annotations:", line):
            skipping = True
        elif skipping and not re.match(r"^         ", line):
            skipping = False
        if not skipping:
            kept.append(line)
    return kept


def split_rules(text, work, file_name):
    """The file's rules one per file, in order, each under its own group's name. The files'
    layout: `  - name:` per group, `    rules:`, then `      - record:` / `      - alert:`."""
    out, group, head, rule = [], None, None, []

    def emit():
        if rule and group:
            path = os.path.join(work, f"{len(out):03d}-{file_name}")
            with open(path, "w") as f:
                f.write(f"groups:\n  - name: {group}\n    rules:\n" + "".join(without_annotations(rule)))
            out.append(path)

    for line in text.splitlines(keepends=True):
        if m := re.match(r"^  - name: (\S+)", line):
            emit()
            group, rule = m.group(1), []
        elif re.match(r"^      - (record|alert):", line):
            emit()
            rule = [line]
        elif rule:
            rule.append(line)
    emit()
    return out


def points_per_query(path, timing, start, end):
    """The whole span in one query, so that no `for:` restarts at a chunk's edge (vmalert 1.79
    replays each chunk afresh); a day per query for an alert without `for:`, which has none to
    restart: vmalert pushes an alert's every pending or firing sample as a series of its own,
    all of a query's at once, and a regression on hundreds of disks for weeks would overflow
    any queue (-remoteWrite.maxQueueSize)."""
    name = rule_name(path)
    if name in timing and timing[name][0] == 0:
        return 96
    return (end - start) // 900 + 2


def replay(work, port, rule_files, timing, start, end):
    """Each rule replayed in turn; returns the wall time of each."""
    store = f"http://127.0.0.1:{port}"
    fmt = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
    times = []
    for path in rule_files:
        cmd = ["vmalert", f"-rule={path}", f"-datasource.url={store}", f"-remoteWrite.url={store}",
               f"-replay.timeFrom={fmt(start)}", f"-replay.timeTo={fmt(end)}",
               f"-evaluationInterval={INTERVAL}", f"-datasource.queryStep={INTERVAL}",
               f"-replay.maxDatapointsPerQuery={points_per_query(path, timing, start, end)}",
               "-replay.rulesDelay=0s", "-replay.disableProgressBar",
               "-remoteWrite.flushInterval=1s", "-remoteWrite.maxBatchSize=10000",
               "-remoteWrite.maxQueueSize=5000000", "-loggerLevel=WARN"]
        began = time.monotonic()
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            raise RuntimeError(f"vmalert on {path}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
        flush(port)
        times.append((rule_name(path), time.monotonic() - began))
    return times, cmd


def rule_name(path):
    with open(path) as f:
        return re.search(r"- (?:record|alert): (\S+)", f.read()).group(1)


def export(port, match, start, end):
    """Every series matching `match` over [start, end], as export lines."""
    q = urllib.parse.urlencode({"match[]": match, "start": start, "end": end})
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/export?{q}", timeout=600) as r:
        return [json.loads(line) for line in r if line.strip()]


def series_counts(port, start, end):
    """{metric name: series} in the store over the span."""
    names = promstack.api(port, "/api/v1/label/__name__/values", start=start, end=end)
    return {n: len(promstack.api(port, "/api/v1/series", **{"match[]": n}, start=start, end=end))
            for n in names}


def mix_of(gen_cmd):
    """"seed 28, load afternoon, steal diurnal": from the command that generated the series (a
    --data-dir's may be older than these options: their defaults)."""
    opts = dict(a[2:].split("=", 1) for a in gen_cmd if a.startswith("--") and "=" in a)
    return (f"seed {opts.get('seed', '28')}, load {opts.get('load', 'afternoon')}, "
            f"steal {opts.get('steal', 'diurnal')}")


def report(s, truth, replay_times, counts, seconds, gen_log, commands):
    print("\n## The fleet in simulation\n")
    print(f"{mix_of(commands[0].split())}: "
          f"{truth['hosts']} hosts × 4 disks of {len(truth['models'])} models, {truth['days']} "
          f"days of randread-4k-qd1 every 15 min ({truth['judge']['runs']:,} runs, "
          f"{100 * truth['judge']['judged'] / truth['judge']['runs']:.0f} % judged, "
          f"{100 * truth['judge']['contended'] / truth['judge']['runs']:.0f} % contended); "
          f"{len(truth['faults'])} disks degraded or failed, one model's firmware update.\n")
    print(fleet_score.table(s))
    print("\nThe rules as shipped but for keep_firing_for, which vmalert 1.79 rejects (removed): "
          "there an alert whose expression lapses for one evaluation ends, and waits its `for:` "
          "again when it returns; the last column counts the episodes an engine with "
          "keep_firing_for fires (derived from the replayed pending and firing samples).\n")
    print("\n".join(fleet_score.model_lines(s)))
    passive_lines(s)
    inputs = truth["emitted"]
    recorded = sum(n for k, n in counts.items() if k.startswith("iowatch:"))
    print(f"\nSeries: {inputs['series']:,} imported ({inputs['samples']:,} samples), "
          f"{recorded:,} recorded by the fleet rules, {sum(counts.values()):,} in the store "
          f"(ALERTS included).")
    total = sum(t for _, t in replay_times)
    heavy = sorted(replay_times, key=lambda x: -x[1])[:3]
    print(f"Rule evaluation (vmalert -replay over {truth['days']} days, one run per rule): "
          f"{total:.0f} s for {len(replay_times)} rules; heaviest: "
          + ", ".join(f"{n} {t:.1f} s" for n, t in heavy) + ".")
    print(f"Generation (fleet_simulation, {truth['judge']['runs']:,} runs through the judge): "
          f"{seconds[0]:.0f} s; import into VictoriaMetrics: {seconds[1]:.0f} s.")
    if s["mismatched"]:
        print(f"WARNING: {len(s['mismatched'])} alert(s) whose derived firing differs from the "
              f"replay's: {s['mismatched'][:3]}")
    missed_lines(s)
    print("\nGoals:")
    for goal, met, figure in fleet_score.goals(s):
        print(f"- {'met' if met else 'NOT met'}: {goal}: {figure}")
    print("\nCommands:\n" + "\n".join(f"  {c}" for c in commands))
    print("\nfleet_simulation said:\n" + gen_log.rstrip())


def when(t):
    return time.strftime("%d %H:%M", time.gmtime(t))


def passive_lines(s):
    p = s["passive"]
    if not p:
        return
    print(f"\nPassive judge: {100 * p['judged_share']:.0f} % of the windows with a request "
          f"judged; raised on healthy disks (or before their fault): "
          + (", ".join(f"{h['instance']} {h['device']} ×{h['raises']}" for h in p["healthy_raised"])
             or "none") + ".")
    for f in p["missed"]:
        print(f"- passive judge missed {f['kind']} {f['instance']} {f['device']} (from "
              f"{when(f['start'])}, "
              + (f"{100 * f['loss_per_day']:.1f} %/day" if f["kind"] == "gradual"
                 else f"IOPS × {f['iops_factor']:.2f}") + ")")


def passive_alert_lines(s):
    """Each passive alert's false alarms and the firmware update's disks it fired on."""
    for name, (r, kff) in s["passive_alerts"].items():
        for (instance, probe), a, b in kff["false_alarm_list"][:10]:
            print(f"- {name} false alarm: {instance} {probe.rsplit('-', 1)[-1]} from {when(a)} "
                  f"for {fleet_score.duration(b - a + fleet_score.STEP)}")
        for instance, probe in sorted(kff["firmware_disks"])[:10]:
            print(f"- {name} fired on the firmware update's {instance} {probe.rsplit('-', 1)[-1]}")


def missed_lines(s):
    passive_alert_lines(s)
    for name in fleet_score.HOST_RULES:
        alarms = s["host"][name]["false_alarm_list"]
        for (instance, probe), a, b in alarms[:10]:
            print(f"- {name} false alarm: {instance} {probe} from {when(a)} for "
                  f"{fleet_score.duration(b - a + fleet_score.STEP)}")
        if len(alarms) > 10:
            print(f"- {name}: {len(alarms) - 10} more false alarms")
        for f in s["host"][name]["missed"]:
            print(f"- {name} missed {f['kind']} {f['instance']} {f['probe']} ({f['model']}, "
                  f"from {when(f['start'])}, "
                  + (f"{100 * f['loss_per_day']:.1f} %/day" if f["kind"] == "gradual"
                     else f"IOPS × {f['iops_factor']:.2f}")
                  + f"; the daemon's judge raised it "
                  + (f"{fleet_score.duration(f['judge_first_raise'] - f['start'])} after"
                     if f["judge_first_raise"] else "never") + ")")


def run(args, work):
    for tool in ("victoria-metrics", "vmalert"):
        if not shutil.which(tool):
            print(f"FAIL: {tool} is needed (Debian package victoria-metrics; "
                  "scripts/install-deps.sh installs it)")
            return 1
    data_dir = args.data_dir or work
    os.makedirs(data_dir, exist_ok=True)
    series_path = os.path.join(data_dir, "series.jsonl")
    truth_path = os.path.join(data_dir, "truth.json")
    gen_cmd = [args.generator, f"--recording={unpack_recording(work)}", f"--hosts={args.hosts}",
               f"--days={args.days}", f"--seed={args.seed}", f"--end={end_time()}",
               f"--gradual={args.gradual}", f"--abrupt={args.abrupt}",
               f"--gradual-loss={args.gradual_loss}", f"--abrupt-loss={args.abrupt_loss}",
               f"--load={args.load}",
               f"--steal={args.steal}", f"--passive-window={args.passive_window}",
               f"--threads={args.threads}",
               f"--out={series_path}", f"--truth={truth_path}"]
    cmd_path = os.path.join(data_dir, "generate.cmd")
    if os.path.exists(truth_path):  # --data-dir: generated by an earlier run
        with open(cmd_path) as f:
            gen_cmd = f.read().split()
        gen_log, gen_seconds = f"(reused {series_path})", 0.0
    else:
        with open(cmd_path, "w") as f:
            f.write(" ".join(gen_cmd))
        gen_log, gen_seconds = generate(gen_cmd, os.path.join(data_dir, "generate.log"))
    with open(truth_path) as f:
        truth = json.load(f)
    start, end = truth["start"], truth["end"]
    with ExitStack() as stack:
        vm = stack.enter_context(victoria_metrics(work))
        wait_ready(vm.port)
        import_seconds = import_file(vm.port, series_path)
        rule_files, timing = prepare_rules(work)
        replay_times, vmalert_cmd = replay(work, vm.port, rule_files, timing, start, end)
        if refused := refused_writes(vm):
            raise RuntimeError("victoria-metrics refused writes of the replay:\n"
                               + "\n".join(refused[:5]))
        alerts = export(vm.port, '{__name__="ALERTS"}', start, end)
        counts = series_counts(vm.port, start, end)
    s = fleet_score.score(alerts, truth, timing)
    commands = [" ".join(gen_cmd), " ".join(vm.argv(vm.port)),
                f"curl -T {series_path} http://127.0.0.1:PORT/api/v1/import",
                " ".join(vmalert_cmd).replace(rule_files[-1], "RULE") + "  (for each RULE)"]
    report(s, truth, replay_times, counts, (gen_seconds, import_seconds), gen_log, commands)
    if s["mismatched"]:
        print("FAIL: the firing derived from the alerts' samples is not the replay's")
        return 1
    return check(s, SHORT_KNOWN_GAPS if args.short else KNOWN_GAPS) if args.check else 0


def check(s, known):
    """0 when the goals missed are exactly the `known` ones."""
    goals = fleet_score.goals(s)
    missed = {goal for goal, met, _ in goals if not met}
    # A gap of rows the fleet has not (no passive series) is neither met nor closed.
    present = {goal for goal, _, _ in goals}
    new, closed = missed - set(known), (set(known) & present) - missed
    for goal in sorted(missed & set(known)):
        print(f"known gap: {goal}: {known[goal]}")
    for goal in sorted(new):
        print(f"FAIL: goal not met: {goal}")
    for goal in sorted(closed):
        print(f"FAIL: a known gap closed (update SHORT_KNOWN_GAPS and docs/benchmarks.md): "
              f"{goal}")
    return 1 if new or closed else 0


def main():
    daemon.exit_on_sigterm()
    args = parse_args()
    work = tempfile.mkdtemp(prefix="iowatch-fleet-")
    try:
        return run(args, work)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
