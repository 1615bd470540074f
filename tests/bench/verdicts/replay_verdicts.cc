// Replays recorded probe runs through the real classifier and judge
// (probes/verdicts/job_judge.h, the daemon's) under two policies, the
// first detector (every run judged, before runs were classified by their
// conditions) and the current one, and counts false alarms and
// detections. A recording is a directory written by record.py: state/iowatch.db
// (the runs, their conditions and histograms) and events.json (the scenario
// and its throttle windows).
//
//   replay_verdicts [--min-age=DURATION] [--runs=N] [--metrics=A,B,...] [--tsv] DIR...
//
// A regression raised by a run that started inside a throttle window is a
// detection; any other is a false alarm. For each window and job: the judged
// runs from the window's start to the raise, and the time. --min-age (default
// 20m) replaces the policy's 1 h minimum learning span, which a 30-minute
// recording never reaches; 20 minutes is the shortest span at which the
// quiet recording, whose virtual disk drifted between 11,000 and 15,800 QD1
// IOPS with nothing else on the machine, raises nothing (docs/benchmarks.md,
// "Regression verdicts: false alarms and detections"). --runs
// (default 10) replaces the runs a baseline is learned from, --metrics the
// metrics judged (probes.baseline.metrics; default: the daemon's). A window with
// no end (busyloop's: the disk stays slow) lasts to the recording's end, and
// its clearing is not measured.
//
// Prints one Markdown table per recording (--tsv: one line per recording and
// policy, for tests).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "common/units.h"
#include "probes/store/store.h"
#include "probes/verdicts/job_judge.h"
#include "probes/verdicts/memory_baseline_source.h"
#include "probes/verdicts/run_metrics.h"
#include "tests/bench/verdicts/temporary_database.h"

namespace {

namespace fs = std::filesystem;
using namespace iowatch;
using namespace iowatch::probes;

// A window with no off_unix_ms lasts past every run.
constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max();

struct Window {
  int64_t on_ms = 0;
  int64_t off_ms = kOpenEnd;
};

struct Recording {
  std::string name;
  std::string scenario;
  std::vector<Window> throttle;
  std::vector<RunRecord> runs;  // oldest first, successful only
  // The scenario's start: runs before it are history (the slowdown recording
  // continues the load recording's store), judged to build the baselines and
  // the hysteresis as the daemon did, not counted.
  int64_t start_ms = 0;
};

struct Variant {
  std::string key;  // for --tsv
  std::string name;
  BaselinePolicy policy;
};

// The first detector, before runs were classified: the first 5 successful runs,
// every metric judged (clat included), every run judged whatever its
// conditions, no floors, no quantile rules.
BaselinePolicy BeforePolicy() {
  BaselinePolicy p;
  p.runs = 5;
  p.min_age_ms = 0;
  p.throughput_spread_floor = p.latency_spread_floor = p.tail_spread_floor = 0;
  p.quantile_samples = 0;
  p.quantile_confidence = 0;
  p.metrics = {"iops",
               "bandwidth_bytes",
               "clat_mean_seconds",
               "clat_p50_seconds",
               "clat_p90_seconds",
               "clat_p99_seconds",
               "clat_p99_9_seconds",
               "lat_mean_seconds",
               "slat_mean_seconds"};
  p.contention.classify = false;
  return p;
}

using bench::TemporaryDatabase;

std::optional<Recording> Load(const fs::path& dir) {
  Recording rec;
  rec.name = dir.filename().string();
  std::ifstream events(dir / "events.json");
  std::stringstream text;
  text << events.rdbuf();
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    std::fprintf(stderr, "%s: events.json is not a JSON object\n", dir.c_str());
    return std::nullopt;
  }
  rec.scenario = doc.value("scenario", "");
  rec.start_ms = doc.value("start_unix_ms", int64_t{0});
  for (const nlohmann::json& w : doc.value("throttle", nlohmann::json::array())) {
    rec.throttle.push_back(
        Window{w.value("on_unix_ms", int64_t{0}), w.value("off_unix_ms", kOpenEnd)});
  }
  // A copy, so that opening (which migrates) never alters the recording.
  const fs::path copy = fs::temp_directory_path() / ("replay-" + rec.name + ".db");
  const fs::path db =
      fs::exists(dir / "iowatch.db") ? dir / "iowatch.db" : dir / "state" / "iowatch.db";
  // Declared before the store, so destroyed after it: the copy and its
  // sidecars go once the store has closed them (removed while it was open,
  // the -wal and -shm stayed behind in /tmp).
  const TemporaryDatabase removed_at_exit{copy};
  // A WAL left by an earlier replay of a recording of the same name would be
  // applied to this copy (and corrupt it): remove the copy's sidecars first.
  removed_at_exit.Remove();
  fs::copy_file(db, copy, fs::copy_options::overwrite_existing);
  Result<Store> store = Store::Open(copy);
  if (!store) {
    std::fprintf(stderr, "%s\n", store.error().message.c_str());
    return std::nullopt;
  }
  Result<std::vector<RunRecord>> runs =
      store->RecentRuns("", "", "", std::numeric_limits<size_t>::max(), true);
  if (!runs) {
    std::fprintf(stderr, "%s\n", runs.error().message.c_str());
    return std::nullopt;
  }
  rec.runs.assign(runs->rbegin(), runs->rend());
  return rec;
}

const Window* WindowOf(const Recording& rec, int64_t start_ms) {
  for (const Window& w : rec.throttle) {
    if (start_ms >= w.on_ms && start_ms < w.off_ms) return &w;
  }
  return nullptr;
}

struct Detection {
  std::string job;
  int window = 0;
  std::optional<int64_t> after_ms;  // from the window's start to the raise
  int judged_runs = 0;              // judged runs of the job in the window up to the raise
  int64_t off_ms = 0;               // the window's end
  int judged_after = 0;             // judged runs of the job since the window's end
  std::optional<int> cleared_runs;  // of those, up to the run that cleared every regression
};

struct Tally {
  size_t runs = 0, judged = 0, contended = 0, unknown = 0;
  size_t judged_outside = 0;  // judged runs outside throttle windows
  size_t false_raises = 0;
  std::vector<std::string> false_alarms;  // "job op metric" of each false raise
  std::vector<Detection> detections;
};

// " | bad: lat_mean_seconds, iops | raised: iops" for a trace line; "" when
// nothing was bad and nothing changed. Before it, each judged metric's value
// over its baseline and the distance allowed ("read iops 0.62 (0.35)": 38 %
// below, bad beyond 35 %), and what the baseline was made from.
std::string BadMetrics(const RunJudgement& j) {
  std::string out;
  if (j.judged) {
    std::string ratios;
    for (const MetricVerdict& v : j.verdicts) {
      if (!v.judged) continue;
      ratios += fmt::format("{}{} {} {:.2f} ({:.2f})", ratios.empty() ? " | judged: " : ", ", v.op,
                            v.metric, v.ratio, v.baseline == 0 ? 0.0 : v.threshold / v.baseline);
    }
    out += ratios + (j.against.empty() ? "" : " against " + j.against);
  }
  std::string bad;
  for (const MetricVerdict& v : j.verdicts) {
    if (v.judged && v.bad) bad += (bad.empty() ? " | bad: " : ", ") + v.op + " " + v.metric;
  }
  out += bad;
  std::string changes;
  for (const RegressionChange& c : j.changes) {
    changes += (changes.empty() ? " | " : ", ") +
               std::string(c.regressed ? "raised " : "cleared ") + c.op + " " + c.metric;
  }
  out += changes;
  return out;
}

Tally Replay(const Recording& rec, const Variant& variant) {
  using Series = std::tuple<std::string, std::string, std::string>;
  std::map<Series, std::pair<MemoryBaselineSource, SeriesState>> series;
  std::map<std::pair<std::string, int>, Detection> detections;
  Tally t;
  for (const RunRecord& run : rec.runs) {
    const Series key{run.job, run.fingerprint, run.device};
    auto& [source, state] =
        series
            .try_emplace(key, MemoryBaselineSource(),
                         SeriesState{RegressionTracker::For(variant.policy), {}, 0, {}, {}})
            .first->second;
    source.Add(run);
    // The first detector had no device-wide rule.
    DeviceSuspicion device;
    for (const auto& [other_key, other] : series) {
      if (variant.policy.contention.classify && other_key != key &&
          std::get<2>(other_key) == run.device) {
        device.Add(other.second);
      }
    }
    Result<RunJudgement> judged =
        JudgeRun(run, source, state, device, variant.policy, run.start_unix_ms);
    if (!judged) {
      std::fprintf(stderr, "run %lld: %s\n", static_cast<long long>(run.id),
                   judged.error().message.c_str());
      continue;
    }
    const RunJudgement& j = *judged;
    if (run.start_unix_ms < rec.start_ms) continue;  // history
    // IOWATCH_REPLAY_TRACE=JOB: every run of JOB with its class, band and why.
    if (const char* trace = std::getenv("IOWATCH_REPLAY_TRACE");
        trace != nullptr && run.job == trace) {
      std::fprintf(stderr, "  [%s] %s +%llds band %d judged %d in-window %d: %s\n",
                   variant.name.c_str(), run.job.c_str(),
                   static_cast<long long>((run.start_unix_ms - rec.start_ms) / 1000),
                   j.classification.band, j.judged ? 1 : 0,
                   WindowOf(rec, run.start_unix_ms) != nullptr ? 1 : 0,
                   (j.why + " | " + j.classification.load + BadMetrics(j)).c_str());
    }
    ++t.runs;
    t.contended += j.classification.run_class == RunClass::kContended;
    t.unknown += j.classification.run_class == RunClass::kUnknown;
    const Window* window = WindowOf(rec, run.start_unix_ms);
    if (j.judged) {
      ++t.judged;
      if (window == nullptr) ++t.judged_outside;
    }
    const int window_index =
        window == nullptr ? -1 : static_cast<int>(window - rec.throttle.data());
    if (window != nullptr) {
      Detection& d = detections[{run.job, window_index}];
      d.job = run.job;
      d.window = window_index;
      d.off_ms = window->off_ms;
      if (!d.after_ms && j.judged) ++d.judged_runs;
    }
    // After a window: the judged runs until the job's regressions are all
    // cleared (the goal: cleared as fast as raised).
    for (auto& [detection_key, d] : detections) {
      if (detection_key.first != run.job || !d.after_ms || d.cleared_runs ||
          run.start_unix_ms < d.off_ms) {
        continue;
      }
      if (j.judged) ++d.judged_after;
      if (!state.tracker.AnyRegressed()) d.cleared_runs = d.judged_after;
    }
    for (const RegressionChange& change : j.changes) {
      if (!change.regressed) continue;
      if (window == nullptr) {
        ++t.false_raises;
        t.false_alarms.push_back(run.job + " " + change.op + " " + change.metric);
        std::fprintf(
            stderr, "  [%s] false alarm: %s %s %s %.4g vs %.4g (threshold %.3g) at +%llds\n",
            variant.name.c_str(), run.job.c_str(), change.op.c_str(), change.metric.c_str(),
            change.verdict.value, change.verdict.baseline, change.verdict.threshold,
            static_cast<long long>((run.start_unix_ms - rec.start_ms) / 1000));
        continue;
      }
      Detection& d = detections[{run.job, window_index}];
      if (!d.after_ms) d.after_ms = run.start_unix_ms + run.duration_ms - window->on_ms;
    }
  }
  for (auto& [key, d] : detections) t.detections.push_back(d);
  return t;
}

// One line per variant: recording, scenario, variant, runs, judged,
// contended, false raises, judged runs outside throttle windows, windows ×
// jobs, detected, the most judged runs and seconds a detection took, the
// windows missed ("job/w1,…", "-" for none) and the false alarms ("job op
// metric,…", "-").
void PrintTsv(const Recording& rec, const std::vector<Variant>& variants) {
  for (const Variant& variant : variants) {
    const Tally t = Replay(rec, variant);
    size_t detected = 0;
    int worst_runs = 0, worst_clear = 0;
    int64_t worst_ms = 0;
    std::string missed, uncleared;
    for (const Detection& d : t.detections) {
      if (!d.after_ms) {
        missed += fmt::format("{}{}/w{}", missed.empty() ? "" : ",", d.job, d.window + 1);
        continue;
      }
      ++detected;
      worst_runs = std::max(worst_runs, d.judged_runs);
      worst_ms = std::max(worst_ms, *d.after_ms);
      if (d.cleared_runs) {
        worst_clear = std::max(worst_clear, *d.cleared_runs);
      } else if (d.off_ms != kOpenEnd) {
        uncleared += fmt::format("{}{}/w{}", uncleared.empty() ? "" : ",", d.job, d.window + 1);
      }
    }
    std::string alarms;
    for (const std::string& a : t.false_alarms) alarms += (alarms.empty() ? "" : ",") + a;
    std::printf("%s\t%s\t%s\t%zu\t%zu\t%zu\t%zu\t%zu\t%zu\t%zu\t%d\t%.0f\t%s\t%s\t%d\t%s\n",
                rec.name.c_str(), rec.scenario.c_str(), variant.key.c_str(), t.runs, t.judged,
                t.contended, t.false_raises, t.judged_outside, t.detections.size(), detected,
                worst_runs, static_cast<double>(worst_ms) / 1000,
                missed.empty() ? "-" : missed.c_str(), alarms.empty() ? "-" : alarms.c_str(),
                worst_clear, uncleared.empty() ? "-" : uncleared.c_str());
  }
}

void Print(const Recording& rec, const std::vector<Variant>& variants) {
  const auto own = std::ranges::count_if(
      rec.runs, [&](const RunRecord& r) { return r.start_unix_ms >= rec.start_ms; });
  const int64_t first_ms =
      rec.runs.empty() ? 0 : std::max(rec.runs.front().start_unix_ms, rec.start_ms);
  const size_t history = rec.runs.size() - static_cast<size_t>(own);
  std::printf("\n### %s (%s): %zu runs, %.0f min%s\n\n", rec.name.c_str(), rec.scenario.c_str(),
              static_cast<size_t>(own),
              rec.runs.empty()
                  ? 0.0
                  : static_cast<double>(rec.runs.back().start_unix_ms - first_ms) / 60000,
              history == 0 ? "" : fmt::format(", after {} runs of history", history).c_str());
  std::printf("| detector | judged | contended | false alarms | per 1,000 judged | detected |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const Variant& variant : variants) {
    const Tally t = Replay(rec, variant);
    size_t detected = 0;
    std::string times;
    for (const Detection& d : t.detections) {
      if (d.after_ms) ++detected;
      times += fmt::format(
          "{}{} w{}: {}", times.empty() ? "" : "; ", d.job, d.window + 1,
          d.after_ms ? fmt::format("{:.0f} s, {} judged runs, cleared {}",
                                   static_cast<double>(*d.after_ms) / 1000, d.judged_runs,
                                   d.cleared_runs ? fmt::format("after {} judged", *d.cleared_runs)
                                   : d.off_ms == kOpenEnd ? std::string("– (no end)")
                                                          : std::string("never"))
                     : std::string("missed"));
    }
    const double per_1000 = t.judged_outside == 0 ? 0
                                                  : 1000.0 * static_cast<double>(t.false_raises) /
                                                        static_cast<double>(t.judged_outside);
    std::printf(
        "| %s | %zu of %zu | %.0f %% | %zu | %.1f | %s |\n", variant.name.c_str(), t.judged, t.runs,
        t.runs == 0 ? 0.0 : 100.0 * static_cast<double>(t.contended) / static_cast<double>(t.runs),
        t.false_raises, per_1000,
        t.detections.empty() ? "–"
                             : fmt::format("{} of {}", detected, t.detections.size()).c_str());
    if (!times.empty()) std::printf("\n  %s: %s\n\n", variant.name.c_str(), times.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  int64_t min_age_ms = int64_t{20} * 60 * 1000;
  uint32_t runs = BaselinePolicy{}.runs;
  std::vector<std::string> metrics;
  bool tsv = false;
  std::vector<fs::path> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--tsv") {
      tsv = true;
    } else if (arg.starts_with("--min-age=")) {
      Result<std::chrono::milliseconds> d = ParseDuration(arg.substr(10));
      if (!d) {
        std::fprintf(stderr, "--min-age: %s\n", d.error().message.c_str());
        return 2;
      }
      min_age_ms = d->count();
    } else if (arg.starts_with("--runs=")) {
      const std::string value = arg.substr(7);
      char* end = nullptr;
      const unsigned long n = std::strtoul(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n < 1 || n > 1000) {
        std::fprintf(stderr, "--runs: expected 1 to 1000, got \"%s\"\n", value.c_str());
        return 2;
      }
      runs = static_cast<uint32_t>(n);
    } else if (arg.starts_with("--metrics=")) {
      std::stringstream list(arg.substr(10));
      for (std::string name; std::getline(list, name, ',');) {
        if (FindMetric(name) == nullptr) {
          std::fprintf(stderr, "--metrics: \"%s\" is not a metric a baseline learns\n",
                       name.c_str());
          return 2;
        }
        metrics.push_back(name);
      }
    } else {
      dirs.emplace_back(arg);
    }
  }
  if (dirs.empty()) {
    std::fprintf(
        stderr,
        "usage: replay_verdicts [--min-age=DURATION] [--runs=N] [--metrics=A,B,...] [--tsv] "
        "RECORDING_DIR...\n");
    return 2;
  }
  BaselinePolicy after;
  after.min_age_ms = min_age_ms;
  after.runs = runs;
  after.metrics = metrics;
  BaselinePolicy no_bands = after;
  no_bands.contention.bands = false;
  const std::vector<Variant> variants = {{"before", "first detector", BeforePolicy()},
                                         {"clean-only", "after: clean runs only", no_bands},
                                         {"bands", "after: clean + load bands (default)", after}};
  for (const fs::path& dir : dirs) {
    std::optional<Recording> rec = Load(dir);
    if (!rec) return 1;
    if (tsv) {
      PrintTsv(*rec, variants);
    } else {
      Print(*rec, variants);
    }
  }
  return 0;
}
