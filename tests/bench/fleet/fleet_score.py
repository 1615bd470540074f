"""Scores the alerts vmalert replayed over the simulated fleet (run.py) against its ground truth
(fleet_simulation --truth): per rule, the faults detected, the time from a fault's start to its
first firing, and the false alarms (firing episodes on a disk with no fault, or before its fault
began) per 1,000 host-days; and what the firmware update raised.

Firing comes from the replayed ALERTS series. vmalert 1.79 does not know keep_firing_for (run.py
removes it), so each alert's firing is also derived from its pending and firing samples (where
its expression held) with the rule's `for` and `keep_firing_for`, as an engine that knows
keep_firing_for would fire it; the first derivation without keep_firing_for must reproduce the
replayed firing exactly, which checks the derivation.

The passive judge (fleet_simulation's windows of each disk's own reads, judged by the daemon's
PassiveJudge) is scored from its own raises, which the truth records: the faults it raised, the
time from a fault's start to the window that raised it, and its raises on healthy disks (or
before their fault) per 1,000 host-days. The series its alert reads (iowatch_passive_regression,
iowatch_passive_latency_ratio) are imported; when deploy/prometheus has that alert
(IowatchDiskSlowerThanItsPast), it is scored as the per-disk rules are, in a row of its own.
"""
import statistics

STEP = 900  # the evaluation interval, seconds
HOST_RULES = ("IowatchProbeRegression", "IowatchProbeSlowerThanPeers",
              "IowatchProbeLatencyAbovePeers")
MODEL_RULE = "IowatchModelSlowerThanItsWeek"
# The passive judge's alert, scored when deploy/prometheus has it (its labels name the device,
# not the probe: the disk's probe is "randread-4k-qd1-" + device here).
PASSIVE_RULE = "IowatchDiskSlowerThanItsPast"
# The passive peer rules: a disk's ratio to its past against its host's disks of its model and
# firmware, and against its model's across the fleet. A model-wide shift (the firmware update)
# must leave both silent.
PASSIVE_PEER_RULES = ("IowatchDiskSlowerThanHostPeers", "IowatchDiskSlowerThanItsPeersPassive")
ABRUPT_GOAL = 2 * 3600
FALSE_ALARM_GOAL = 1.0  # per 1,000 host-days


def condition_runs(times):
    """Consecutive evaluation times (seconds, sorted) grouped into [first, last] runs."""
    runs = []
    for t in times:
        if runs and t - runs[-1][1] <= STEP:
            runs[-1][1] = t
        else:
            runs.append([t, t])
    return runs


def firing_episodes(held, for_s, keep_s):
    """[(start, end)] an alert fires over, from the evaluations its expression held at: pending
    from the first, firing once it held `for_s`, kept firing `keep_s` after it last held (a
    return within that time continues the episode)."""
    episodes, current = [], None  # current: [firing since, last held]
    for first, last in condition_runs(sorted(held)):
        if current is not None and first - current[1] <= keep_s + STEP:
            current[1] = last
            continue
        if current is not None:
            episodes.append((current[0], current[1] + keep_s))
            current = None
        if last - first >= for_s:
            current = [first + for_s, last]
    if current is not None:
        episodes.append((current[0], current[1] + keep_s))
    return episodes


def merge(intervals):
    out = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1] + STEP:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def alert_timelines(series):
    """{alertname: {identity: {"held": set, "firing": set}}} from exported ALERTS lines; the
    identity is the alert's labels but alertstate."""
    out = {}
    for s in series:
        labels = dict(s["metric"])
        name, state = labels.pop("alertname"), labels.pop("alertstate")
        labels.pop("__name__", None)
        identity = tuple(sorted(labels.items()))
        entry = out.setdefault(name, {}).setdefault(identity, {"held": set(), "firing": set()})
        stamps = {t // 1000 for t in s["timestamps"]}
        entry["held"] |= stamps
        if state == "firing":
            entry["firing"] |= stamps
    return out


def episodes_by(timelines, key_of, for_s, keep_s, check):
    """{key: merged firing episodes} over the identities of one alert, keyed by key_of(labels);
    `check` collects identities whose derived firing (keep_s = 0) differs from the replay's."""
    out = {}
    for identity, t in timelines.items():
        labels = dict(identity)
        derived = firing_episodes(t["held"], for_s, keep_s)
        if keep_s == 0:
            replayed = firing_episodes(t["firing"], 0, 0)
            if [(a, b) for a, b in derived] != replayed:
                check.append(labels)
        out.setdefault(key_of(labels), []).extend(derived)
    return {k: merge(v) for k, v in out.items()}


def disk_of(labels):
    return (labels.get("instance"), labels.get("probe"))


def passive_disk_of(labels):
    return (labels.get("instance"), "randread-4k-qd1-" + labels.get("device", ""))


class Truth:
    def __init__(self, truth):
        self.t = truth
        self.host_days = truth["hosts"] * truth["days"]
        self.faults = {(f["instance"], f["probe"]): f for f in truth["faults"]}
        mf = truth["model_fault"]
        self.model_fault = mf
        # The firmware model's disks: (instance, probe) -> its host's update time. Their probes
        # are the same four on every host; the instances are those of the model's hosts.
        self.firmware_hosts = {h["instance"]: h["update"] for h in mf["host_updates"]}

    def fault_start(self, disk):
        """When the disk's fault began (its host's firmware update for the slowed model), or
        None for a healthy disk."""
        if disk in self.faults:
            return self.faults[disk]["start"]
        return self.firmware_hosts.get(disk[0])


def score_host_rule(episodes, truth):
    """Detections, times to detect and false alarms of one per-disk rule."""
    result = {"detected": {"gradual": [], "abrupt": []}, "missed": [], "false_alarms": 0,
              "false_alarm_list": [], "firmware_disks": set()}
    for disk, fault in truth.faults.items():
        first = next((a for a, _ in episodes.get(disk, []) if a >= fault["start"]), None)
        if first is None:
            result["missed"].append(fault)
        else:
            result["detected"][fault["kind"]].append(first - fault["start"])
            if fault["kind"] == "gradual":
                days = (first - fault["start"]) / 86400
                result.setdefault("loss", []).append(min(0.8, fault["loss_per_day"] * days))
    for disk, eps in episodes.items():
        start = truth.fault_start(disk)
        for a, b in eps:
            if start is None or a < start:
                result["false_alarms"] += 1
                result["false_alarm_list"].append((disk, a, b))
            elif disk[0] in truth.firmware_hosts:
                result["firmware_disks"].add(disk)
    return result


def score_model_rule(episodes, truth):
    mf = truth.model_fault
    fired = {k: eps for k, eps in episodes.items()
             if k[0] == mf["model"] and any(a >= mf["first_update"] for a, _ in eps)}
    first = min((a for eps in fired.values() for a, _ in eps if a >= mf["first_update"]),
                default=None)
    false_alarms = sum(1 for k, eps in episodes.items() for a, _ in eps
                       if k[0] != mf["model"] or a < mf["first_update"])
    return {"alerts": sorted(fired), "episodes": sum(len(e) for e in fired.values()),
            "first": first, "false_alarms": false_alarms}


def union_detection(results, truth):
    """The faults any of the per-disk rules found, each at its earliest."""
    out = {"gradual": [], "abrupt": []}
    missed = []
    for disk, fault in truth.faults.items():
        times = [r["ttd_by_disk"].get(disk) for r in results.values()]
        times = [t for t in times if t is not None]
        if times:
            out[fault["kind"]].append(min(times))
        else:
            missed.append(fault)
    return out, missed


def score(alert_series, truth_json, rules):
    """rules: {alertname: (for_s, keep_s)}. Returns everything the report prints."""
    truth = Truth(truth_json)
    timelines = alert_timelines(alert_series)
    mismatched = []
    out = {"truth": truth, "host": {}, "host_kff": {}, "mismatched": mismatched}
    for name in HOST_RULES:
        for_s, keep_s = rules[name]
        eps = episodes_by(timelines.get(name, {}), disk_of, for_s, 0, mismatched)
        r = score_host_rule(eps, truth)
        r["ttd_by_disk"] = {}
        for disk, fault in truth.faults.items():
            first = next((a for a, _ in eps.get(disk, []) if a >= fault["start"]), None)
            if first is not None:
                r["ttd_by_disk"][disk] = first - fault["start"]
        out["host"][name] = r
        kff = episodes_by(timelines.get(name, {}), disk_of, for_s, keep_s, [])
        out["host_kff"][name] = score_host_rule(kff, truth)
    out["union"] = union_detection(out["host"], truth)
    for_s, keep_s = rules[MODEL_RULE]
    model_key = lambda l: (l.get("model"), l.get("fingerprint"), l.get("op"))
    timeline = timelines.get(MODEL_RULE, {})
    out["model"] = score_model_rule(episodes_by(timeline, model_key, for_s, 0, mismatched), truth)
    out["model_kff"] = score_model_rule(episodes_by(timeline, model_key, for_s, keep_s, []), truth)
    out["passive"] = score_passive(truth)
    # Each passive alert deploy/prometheus has: (as replayed, with keep_firing_for).
    out["passive_alerts"] = {}
    for name in (PASSIVE_RULE,) + PASSIVE_PEER_RULES:
        if name not in rules:
            continue
        for_s, keep_s = rules[name]
        timeline = timelines.get(name, {})
        out["passive_alerts"][name] = (
            score_host_rule(episodes_by(timeline, passive_disk_of, for_s, 0, mismatched), truth),
            score_host_rule(episodes_by(timeline, passive_disk_of, for_s, keep_s, []), truth))
    return out


def score_passive(truth):
    """The passive judge's own raises from the truth; None when the fleet had no passive
    series."""
    p = truth.t.get("passive")
    if not p or not p["window_seconds"]:
        return None
    out = {"detected": {"gradual": [], "abrupt": []}, "missed": [], "loss": [],
           "false_alarms": p["healthy_raises"], "healthy_raised": p["healthy_raised"],
           "window_seconds": p["window_seconds"],
           "judged_share": p["judged"] / p["windows"] if p["windows"] else 0,
           "firmware_disks": truth.model_fault["passive_raised_disks"]}
    for fault in truth.faults.values():
        raised = fault.get("passive_first_raise")
        if raised is None:
            out["missed"].append(fault)
            continue
        out["detected"][fault["kind"]].append(raised - fault["start"])
        if fault["kind"] == "gradual":
            out["loss"].append(min(0.8, fault["loss_per_day"] * (raised - fault["start"]) / 86400))
    return out


def duration(seconds):
    if seconds is None:
        return "–"
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} d"
    return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}"


def ttd(times):
    if not times:
        return "–"
    return f"{duration(statistics.median(times))} ({duration(max(times))})"


def loss(losses):
    if not losses:
        return "–"
    return f"{100 * statistics.median(losses):.0f} % ({100 * max(losses):.0f} %)"


def rate(count, truth):
    return 1000.0 * count / truth.host_days


def host_row(name, r, kff, truth):
    n_g = sum(1 for f in truth.faults.values() if f["kind"] == "gradual")
    n_a = len(truth.faults) - n_g
    det = r["detected"]
    within = sum(1 for t in det["abrupt"] if t <= ABRUPT_GOAL)
    return (f"| {name} | {len(det['gradual'])} of {n_g} | {len(det['abrupt'])} of {n_a} "
            f"| {ttd(det['gradual'])} | {loss(r.get('loss'))} | {ttd(det['abrupt'])} "
            f"| {within} of {n_a} "
            f"| {r['false_alarms']} ({rate(r['false_alarms'], truth):.2f}) "
            f"| {kff['false_alarms']} ({rate(kff['false_alarms'], truth):.2f}) |")


def table(s):
    truth = s["truth"]
    lines = [
        "| rule | gradual detected | abrupt detected | time to detect, gradual: median (max) "
        "| IOPS lost by then | abrupt: median (max) | abrupt within 2 h "
        "| false alarms (per 1,000 host-days) | with keep_firing_for |",
        "|---|---|---|---|---|---|---|---|---|"]
    for name in HOST_RULES:
        lines.append(host_row(name, s["host"][name], s["host_kff"][name], truth))
    det, _ = s["union"]
    n_a = sum(1 for f in truth.faults.values() if f["kind"] == "abrupt")
    n_g = len(truth.faults) - n_a
    lines.append(f"| any of the three | {len(det['gradual'])} of {n_g} | {len(det['abrupt'])} of "
                 f"{n_a} | {ttd(det['gradual'])} | | {ttd(det['abrupt'])} | "
                 f"{sum(1 for t in det['abrupt'] if t <= ABRUPT_GOAL)} of {n_a} | | |")
    if s["passive"]:
        lines.append(passive_row(s["passive"], truth))
    for name, (r, kff) in s["passive_alerts"].items():
        lines.append(host_row(name, r, kff, truth))
    return "\n".join(lines)


def passive_row(p, truth):
    """The passive judge's row: its own raises (no alert, so no keep_firing_for)."""
    n_g = sum(1 for f in truth.faults.values() if f["kind"] == "gradual")
    n_a = len(truth.faults) - n_g
    det = p["detected"]
    within = sum(1 for t in det["abrupt"] if t <= ABRUPT_GOAL)
    return (f"| passive judge, {p['window_seconds'] // 60} min windows (its own raises) "
            f"| {len(det['gradual'])} of {n_g} | {len(det['abrupt'])} of {n_a} "
            f"| {ttd(det['gradual'])} | {loss(p['loss'])} | {ttd(det['abrupt'])} "
            f"| {within} of {n_a} | {p['false_alarms']} ({rate(p['false_alarms'], truth):.2f}) "
            f"| |")


def model_lines(s):
    truth, m, mk = s["truth"], s["model"], s["model_kff"]
    mf = truth.model_fault
    alerts = ", ".join("/".join(str(x) for x in k) for k in m["alerts"]) or "none"
    first = m["first"]
    lines = [
        f"Firmware update: {mf['model']} {mf['from']} → {mf['to']} (IOPS × {mf['iops_factor']}), "
        f"{mf['hosts']} hosts ({mf['disks']} disks) updated over "
        f"{duration(mf['last_update'] - mf['first_update'])}, each down "
        f"{duration(mf['reboot_seconds'])} for it.",
        f"- {MODEL_RULE}: {len(m['alerts'])} alert(s) ({alerts}), {m['episodes']} firing "
        f"episode(s) ({mk['episodes']} with keep_firing_for); first firing "
        f"{duration(first - mf['first_update']) if first else '–'} after the first host's update, "
        f"{duration(first - mf['half_updated']) if first else '–'} after half the hosts had it; "
        f"false alarms: {m['false_alarms']} ({mk['false_alarms']} with keep_firing_for).",
    ]
    for name in HOST_RULES:
        n = len(s["host"][name]["firmware_disks"])
        lines.append(f"- {name} on the updated model's disks after their update: {n} of "
                     f"{mf['disks']} disks")
    if s["passive"]:
        lines.append(f"- the passive judge on the updated model's disks after their update: "
                     f"{s['passive']['firmware_disks']} of {mf['disks']} disks (their models "
                     f"outlive the update's reboot, as the daemon's store keeps them, so the new "
                     f"firmware is judged against the old; a firmware the fleet keeps is "
                     f"accepted per disk with iowatch baseline passive-reset)")
    return lines


def goals(s):
    """[(goal, met, figure)]."""
    truth = s["truth"]
    det, missed = s["union"]
    n_a = sum(1 for f in truth.faults.values() if f["kind"] == "abrupt")
    within = sum(1 for t in det["abrupt"] if t <= ABRUPT_GOAL)
    out = [("every injected fault detected (by a per-disk rule)", not missed,
            f"{len(truth.faults) - len(missed)} of {len(truth.faults)}"),
           ("every abrupt fault within 2 h", within == n_a, f"{within} of {n_a}")]
    m = s["model"]
    peer_storm = sum(len(s["host"][n]["firmware_disks"]) for n in HOST_RULES[1:])
    out.append(("the model-wide regression as one alert, no peer alert on its disks",
                len(m["alerts"]) == 1 and peer_storm == 0,
                f"{len(m['alerts'])} model alert(s), {peer_storm} peer alert(s) on its disks"))
    for name in HOST_RULES:
        fa = s["host_kff"][name]["false_alarms"]
        out.append((f"{name}: at most 1 false alarm per 1,000 host-days",
                    rate(fa, truth) <= FALSE_ALARM_GOAL, f"{rate(fa, truth):.2f}"))
    if p := s["passive"]:
        n_g = sum(1 for f in truth.faults.values() if f["kind"] == "gradual")
        p_within = sum(1 for t in p["detected"]["abrupt"] if t <= ABRUPT_GOAL)
        out += [("passive judge: every abrupt fault raised within 2 h", p_within == n_a,
                 f"{p_within} of {n_a}"),
                ("passive judge: every gradual fault raised", len(p["detected"]["gradual"]) == n_g,
                 f"{len(p['detected']['gradual'])} of {n_g}"),
                ("passive judge: at most 1 raise on a healthy disk per 1,000 host-days",
                 rate(p["false_alarms"], truth) <= FALSE_ALARM_GOAL,
                 f"{rate(p['false_alarms'], truth):.2f}")]
    for name, (_, kff) in s["passive_alerts"].items():
        out.append((f"{name}: at most 1 false alarm per 1,000 host-days",
                    rate(kff["false_alarms"], truth) <= FALSE_ALARM_GOAL,
                    f"{rate(kff['false_alarms'], truth):.2f}"))
    peers = [n for n in PASSIVE_PEER_RULES if n in s["passive_alerts"]]
    if peers:
        storm = sum(len(s["passive_alerts"][n][1]["firmware_disks"]) for n in peers)
        out.append(("the passive peer rules silent on the model-wide regression's disks",
                    storm == 0, f"{storm} alert(s) on its disks"))
    return out
