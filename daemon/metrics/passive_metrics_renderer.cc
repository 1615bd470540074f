#include "daemon/metrics/passive_metrics_renderer.h"

#include <array>
#include <functional>

#include "daemon/exposition/exposition.h"

namespace iowatch::daemon {
namespace {

using probes::PassiveReason;

// One family: its name, type, help, and the sample of one series (nullopt:
// none for it).
struct PassiveFamily {
  std::string_view name;
  std::string_view type;
  std::string_view help;
  std::function<std::optional<double>(const PassiveSeriesRow&)> value;
};

std::optional<double> Judged(const PassiveSeriesRow& row, double probes::PassiveVerdict::*field) {
  if (!row.judged) return std::nullopt;
  return (*row.judged).*field;
}

const std::array<PassiveFamily, 8>& PassiveFamilyTable() {
  static const std::array<PassiveFamily, 8> families = {{
      {"iowatch_passive_bound_ratio", "gauge",
       "The last judged window's bound: observed over predicted latency above it is bad.",
       [](const PassiveSeriesRow& r) { return Judged(r, &probes::PassiveVerdict::bound_ratio); }},
      {"iowatch_passive_drift_ratio", "gauge",
       "The series' mean latency over its first day's at the first day's loads: its model of the "
       "last two days against the first day's (the drift watch).",
       [](const PassiveSeriesRow& r) { return r.drift_ratio; }},
      {"iowatch_passive_latency_ratio", "gauge",
       "The last judged window's mean latency over the model's prediction at its load.",
       [](const PassiveSeriesRow& r) { return Judged(r, &probes::PassiveVerdict::ratio); }},
      {"iowatch_passive_model_windows", "gauge",
       "Windows the series' model learned from; 0 while it learns.",
       [](const PassiveSeriesRow& r) -> std::optional<double> {
         return static_cast<double>(r.model_windows);
       }},
      {"iowatch_passive_observed_latency_seconds", "gauge",
       "The last window's mean latency per request (device stage, or diskstats' await).",
       [](const PassiveSeriesRow& r) -> std::optional<double> {
         if (r.last.window.requests == 0) return std::nullopt;
         return r.last.window.mean_seconds;
       }},
      {"iowatch_passive_predicted_latency_seconds", "gauge",
       "The model's mean latency at the last judged window's load.",
       [](const PassiveSeriesRow& r) {
         return Judged(r, &probes::PassiveVerdict::predicted_seconds);
       }},
      {"iowatch_passive_regression", "gauge",
       "1 after passive.hysteresis judged windows in a row slower than the bound, 0 after as many "
       "good ones; also 1 while the drift watch holds the series raised.",
       [](const PassiveSeriesRow& r) -> std::optional<double> { return r.regressed ? 1 : 0; }},
      {"iowatch_passive_regression_since_timestamp_seconds", "gauge",
       "The start of the first bad window of the standing regression, or the refit at which a "
       "drift first crossed 10 % (the earlier).",
       [](const PassiveSeriesRow& r) -> std::optional<double> {
         if (!r.regressed || r.regressed_since_ms == 0) return std::nullopt;
         return static_cast<double>(r.regressed_since_ms) / 1000;
       }},
  }};
  return families;
}

// The last window's requests and the series' totals since start, which every
// series has from its first window.
const std::array<PassiveFamily, 5>& PassiveCountTable() {
  static const std::array<PassiveFamily, 5> families = {{
      {"iowatch_passive_window_requests", "gauge", "Requests completed in the last window.",
       [](const PassiveSeriesRow& r) -> std::optional<double> {
         return static_cast<double>(r.last.window.requests);
       }},
      {"iowatch_passive_requests_total", "counter",
       "Requests of the series' windows without a probe of iowatch's inside, since start.",
       [](const PassiveSeriesRow& r) -> std::optional<double> {
         return static_cast<double>(r.production_requests);
       }},
      {"iowatch_passive_latency_seconds_total", "counter",
       "Their latency summed (each window's requests times its mean): its rate over the "
       "requests' is their mean latency over any span.",
       [](const PassiveSeriesRow& r) -> std::optional<double> { return r.production_seconds; }},
      {"iowatch_passive_judged_latency_seconds_total", "counter",
       "The judged windows' latency summed (each one's requests times its mean), since start.",
       [](const PassiveSeriesRow& r) -> std::optional<double> { return r.judged_seconds; }},
      {"iowatch_passive_predicted_latency_seconds_total", "counter",
       "The same windows' latency as the model predicted it at their loads: the judged "
       "latency's rate over this one's is the series' ratio to its own past over any span.",
       [](const PassiveSeriesRow& r) -> std::optional<double> { return r.predicted_seconds; }},
  }};
  return families;
}

constexpr std::string_view kStoreUpName = "iowatch_passive_store_up";
constexpr std::string_view kStoreErrorsName = "iowatch_passive_store_errors_total";
constexpr std::string_view kWindowsName = "iowatch_passive_windows_total";

// Both tables' families, in the order they are rendered.
std::vector<const PassiveFamily*> PassiveFamilies() {
  std::vector<const PassiveFamily*> out;
  for (const PassiveFamily& f : PassiveFamilyTable()) out.push_back(&f);
  for (const PassiveFamily& f : PassiveCountTable()) out.push_back(&f);
  return out;
}

constexpr std::array<PassiveReason, kPassiveReasons> kReasons = {
    PassiveReason::kJudged,        PassiveReason::kTooFewRequests, PassiveReason::kProbe,
    PassiveReason::kCountersReset, PassiveReason::kLearning,       PassiveReason::kOutsideModel};

}  // namespace

void RenderPassiveMetrics(const PassiveSnapshot& snapshot, std::string& out) {
  ExpositionWriter w(out);
  w.Family(kStoreUpName, "gauge",
           "1 while the passive judge's states and windows are stored (a restart keeps its "
           "verdicts and models), 0 when it judges in memory.");
  w.Sample(nullptr, 0, snapshot.store_up ? 1 : 0);
  w.Family(kStoreErrorsName, "counter",
           "Batches of the passive judge's windows and states that could not be stored.");
  w.Sample(nullptr, 0, static_cast<double>(snapshot.store_errors));
  if (snapshot.series.empty()) return;
  const auto labels = [](const PassiveSeriesRow& r) {
    return std::array<Label, 4>{{{"device", r.device},
                                 {"op", r.op},
                                 {"size", r.size},
                                 {"source", probes::ToString(r.source)}}};
  };
  for (const PassiveFamily* family : PassiveFamilies()) {
    const PassiveFamily& f = *family;
    w.Family(f.name, f.type, f.help);
    for (const PassiveSeriesRow& r : snapshot.series) {
      if (const std::optional<double> v = f.value(r)) {
        const auto l = labels(r);
        w.Sample(l.data(), l.size(), *v);
      }
    }
  }
  w.Family(kWindowsName, "counter",
           "Windows since start by what became of them: judged, too_few_requests, probe, "
           "counters_reset, learning, outside_model.");
  for (const PassiveSeriesRow& r : snapshot.series) {
    for (size_t i = 0; i < kReasons.size(); ++i) {
      const std::array<Label, 5> l = {{{"device", r.device},
                                       {"op", r.op},
                                       {"size", r.size},
                                       {"source", probes::ToString(r.source)},
                                       {"result", probes::ToString(kReasons[i])}}};
      w.Sample(l.data(), l.size(), static_cast<double>(r.windows[i]));
    }
  }
}

std::vector<std::string_view> PassiveMetricFamilyNames() {
  std::vector<std::string_view> names;
  for (const PassiveFamily* f : PassiveFamilies()) names.push_back(f->name);
  names.push_back(kWindowsName);
  names.push_back(kStoreUpName);
  names.push_back(kStoreErrorsName);
  return names;
}

}  // namespace iowatch::daemon
