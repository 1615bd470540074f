#include "tests/bench/fleet/passive_timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

#include "probes/verdicts/passive/passive_judge.h"

namespace iowatch::fleet {
namespace {

// What the daemon's /metrics says of the disk's passive series between
// two windows (daemon/passive/passive_service.cc's row).
struct PassivePublished {
  bool series = false;
  bool judged = false;
  bool regressed = false;
  float ratio = 0;
  float observed_seconds = 0;  // the last window's, judged or not
  float requests = 0;
  uint32_t judged_total = 0;  // since the daemon started
  // Requests and their summed latency of the windows with no probe inside,
  // since the daemon started (PassiveService's production totals).
  double requests_total = 0;
  double seconds_total = 0;
  double judged_seconds_total = 0;  // the judged windows' observed, and predicted
  double predicted_seconds_total = 0;
};

// One window's draws, made whatever becomes of the window, so that a
// disk's windows are the same however many of them are judged.
struct WindowDraws {
  double load = 0;     // lognormal factor of the load
  double burst = 0;    // uniform: a burst below the shape's burst_chance
  double steal = 0;    // uniform: the steal's factor (0.5 + this)
  double latency = 0;  // standard normal: the window's scatter
};

WindowDraws DrawWindow(std::mt19937_64& rng, const probes::test_data::DiurnalShape& shape) {
  std::lognormal_distribution<double> load(0, shape.load_noise);
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> normal(0, 1);
  WindowDraws d;
  d.load = load(rng);
  d.burst = unit(rng);
  d.steal = unit(rng);
  d.latency = normal(rng);
  return d;
}

// The window [start_ms, start_ms + window_ms) of the disk's reads, as the
// daemon's feed would cut it with the BPF collector on.
probes::PassiveWindow WindowOf(const Fleet& fleet, const DiskSpec& disk, const PassiveNoise& noise,
                               int64_t start_ms, int64_t window_ms, const WindowDraws& d) {
  const probes::test_data::DiurnalShape& shape = fleet.hosts[static_cast<size_t>(disk.host)];
  const int64_t mid_ms = start_ms + window_ms / 2;
  double rate = (shape.night_load + probes::test_data::LoadLevel(shape, mid_ms) *
                                        (shape.peak_load - shape.night_load)) *
                d.load;
  if (d.burst < shape.burst_chance) rate *= 4;
  const double steal =
      std::min(0.6, probes::test_data::StealLevel(shape, mid_ms) * (0.5 + d.steal));
  const double seconds = static_cast<double>(window_ms) / 1000;
  probes::PassiveWindow w;
  w.device = DeviceOf(disk.slot);
  w.op = "read";
  w.size = "all";
  w.source = probes::PassiveSource::kDevice;
  w.start_ms = start_ms;
  w.end_ms = start_ms + window_ms;
  w.requests = static_cast<uint64_t>(std::llround(rate * seconds));
  w.rate = static_cast<double>(w.requests) / seconds;
  w.mean_bytes = 16384;  // others' requests in diurnal_disk.h
  w.steal = steal;
  if (w.requests == 0) return w;
  const double n = static_cast<double>(w.requests);
  const double sigma =
      std::sqrt(noise.sigma_dev * noise.sigma_dev + noise.request_cv * noise.request_cv / n);
  const double base_s = fleet.models[static_cast<size_t>(disk.model)].latency_us * 1e-6;
  w.mean_seconds = base_s * (1 + w.rate / shape.load_scale) * (1 + shape.steal_slope * steal) /
                   SpeedAt(disk, mid_ms) * std::exp(sigma * d.latency);
  return w;
}

// IOWATCH_FLEET_PASSIVE_TRACE=INSTANCE/DEVICE (host0051:9860/sdd): that
// disk's windows on stderr, from an hour before its fault (all of them on
// a healthy disk) to its first raise, with what the judge made of each.
bool PassiveTraced(const DiskSpec& disk) {
  const char* want = std::getenv("IOWATCH_FLEET_PASSIVE_TRACE");
  return want != nullptr && InstanceOf(disk.host) + "/" + DeviceOf(disk.slot) == want;
}

void TraceWindow(const probes::PassiveVerdict& v) {
  const time_t at = v.window.start_ms / 1000;
  char when[32];
  std::strftime(when, sizeof when, "%d %H:%M", std::gmtime(&at));
  std::fprintf(stderr,
               "%s %-16s n %6llu rate %7.1f steal %.3f mean %.1f us ratio %.2f bound %.2f%s%s %s\n",
               when, std::string(probes::ToString(v.reason)).c_str(),
               static_cast<unsigned long long>(v.window.requests), v.window.rate, v.window.steal,
               v.window.mean_seconds * 1e6, v.ratio, v.bound_ratio,
               v.change ? (v.change->regressed ? " RAISED" : " cleared") : "",
               v.change && v.change->drift ? " (drift)" : "", v.why.c_str());
}

}  // namespace

void SimulatePassive(const Fleet& fleet, const DiskSpec& disk, const PassiveNoise& noise,
                     int64_t window_ms, const std::vector<RunSpan>& runs, DiskTimeline& timeline) {
  std::mt19937_64 rng(disk.seed ^ 0x9a551e);  // its own stream: the probe's draws stay
  const probes::test_data::DiurnalShape& shape = fleet.hosts[static_cast<size_t>(disk.host)];
  const probes::PassiveJudgePolicy policy;
  const probes::PassiveSeriesKey key{"read", "all", probes::PassiveSource::kDevice};
  std::optional<probes::PassiveJudge> judge;  // from the disk's first window
  PassivePublished now;
  PassiveCounts& counts = timeline.counts.passive;
  size_t next = 0;  // the next scrape to fill
  const auto publish_until = [&](int64_t until_ms) {
    for (; next < timeline.scrapes.size(); ++next) {
      const int64_t at = fleet.start_ms + static_cast<int64_t>(next) * kIntervalMs;
      if (at >= until_ms) return;
      Scrape& s = timeline.scrapes[next];
      const PassivePublished p = DownAt(disk, at) ? PassivePublished{} : now;
      s.passive_series = p.series;
      s.passive_judged = p.judged;
      s.passive_regressed = p.regressed;
      s.passive_ratio = p.ratio;
      s.passive_observed_seconds = p.observed_seconds;
      s.passive_requests = p.requests;
      s.passive_judged_total = p.judged_total;
      s.passive_requests_total = p.requests_total;
      s.passive_seconds_total = p.seconds_total;
      s.passive_judged_seconds_total = p.judged_seconds_total;
      s.passive_predicted_seconds_total = p.predicted_seconds_total;
    }
  };
  const bool traced = PassiveTraced(disk);
  size_t run = 0;  // the first probe run not over before the window
  for (int64_t start = fleet.start_ms; start + window_ms <= fleet.spec.end_ms; start += window_ms) {
    const int64_t end = start + window_ms;
    const WindowDraws draws = DrawWindow(rng, shape);
    publish_until(end);
    // A host down for its update: no window; the daemon restarts after with
    // the judge's states and models from its store, as they were.
    if (DownAt(disk, start) || DownAt(disk, end - 1)) {
      // The daemon's counters start again with it.
      now.judged_total = 0;
      now.requests_total = now.seconds_total = 0;
      now.judged_seconds_total = now.predicted_seconds_total = 0;
      continue;
    }
    if (!judge) judge.emplace(policy);
    probes::PassiveWindow w = WindowOf(fleet, disk, noise, start, window_ms, draws);
    while (run < runs.size() && runs[run].second <= start) ++run;
    w.probe = run < runs.size() && runs[run].first < end;
    // As PassiveService: a series starts with its first window of enough
    // requests (an idle disk exports nothing).
    if (w.requests == 0 || (!now.series && w.requests < policy.model.min_requests)) continue;
    ++counts.windows;
    const probes::PassiveVerdict v = judge->Judge(w);
    if (traced && counts.first_raise_ms < 0 &&
        (disk.fault.kind == FaultKind::kNone || start >= disk.fault.start_ms - kHourMs)) {
      TraceWindow(v);
    }
    now.series = true;
    if (!w.probe) {
      now.requests_total += static_cast<double>(w.requests);
      now.seconds_total += static_cast<double>(w.requests) * w.mean_seconds;
    }
    now.regressed = judge->Regressed(key);
    now.observed_seconds = static_cast<float>(w.mean_seconds);
    now.requests = static_cast<float>(w.requests);
    if (v.reason == probes::PassiveReason::kJudged) {
      ++counts.judged;
      ++now.judged_total;
      now.judged = true;
      now.ratio = static_cast<float>(v.ratio);
      now.judged_seconds_total += static_cast<double>(w.requests) * w.mean_seconds;
      now.predicted_seconds_total += static_cast<double>(w.requests) * v.predicted_seconds;
    }
    if (!v.change || !v.change->regressed) continue;
    const bool after_fault = disk.fault.kind != FaultKind::kNone && start >= disk.fault.start_ms;
    if (!after_fault) {
      ++counts.healthy_raises;
    } else if (counts.first_raise_ms < 0) {
      counts.first_raise_ms = end;
    }
  }
  publish_until(fleet.spec.end_ms + 1);
}

}  // namespace iowatch::fleet
