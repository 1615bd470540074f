#include "daemon/metrics/self_metrics.h"

#include <vector>

#include "common/version.h"
#include "daemon/metrics/collected_metrics.h"
#include "daemon/metrics/process_stats.h"

namespace iowatch::daemon {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

prometheus::Gauge& GaugeOf(prometheus::Registry& registry, const std::string& name,
                           const std::string& help) {
  return BuildGauge().Name(name).Help(help).Register(registry).Add({});
}

prometheus::Counter& Reloads(prometheus::Registry& registry, const std::string& result) {
  return BuildCounter()
      .Name("iowatch_config_reloads_total")
      .Help("Configuration loads (start and SIGHUP), by result.")
      .Register(registry)
      .Add({{"result", result}});
}

MetricFamily Family(std::string name, std::string help, MetricType type, double value) {
  ClientMetric metric;
  (type == MetricType::Counter ? metric.counter.value : metric.gauge.value) = value;
  return MetricFamily{std::move(name), std::move(help), type, {metric}};
}

// The standard process_* families every Prometheus client exports, so
// existing process dashboards and alerts work unchanged.
std::vector<MetricFamily> ProcessFamilies(const FileTree& procfs, double start_time_seconds) {
  const auto p = ReadProcessStats(procfs);
  if (!p) return {};
  const auto d = [](uint64_t v) { return static_cast<double>(v); };
  return {
      Family("process_cpu_seconds_total", "User and system CPU time of iowatch.",
             MetricType::Counter, p->cpu_seconds),
      Family("process_max_fds", "File descriptor limit of iowatch.", MetricType::Gauge,
             d(p->max_fds)),
      Family("process_open_fds", "Open file descriptors of iowatch.", MetricType::Gauge,
             d(p->open_fds)),
      Family("process_resident_memory_bytes", "Resident memory of iowatch.", MetricType::Gauge,
             d(p->resident_bytes)),
      Family("process_start_time_seconds", "Start time of iowatch, seconds since the epoch.",
             MetricType::Gauge, start_time_seconds),
      Family("process_virtual_memory_bytes", "Virtual memory of iowatch.", MetricType::Gauge,
             d(p->virtual_bytes)),
  };
}

// 1 ms to 2.5 s: a sample of a few devices takes well under 1 ms, one of
// thousands tens of ms; beyond a second the interval is at risk.
const prometheus::Histogram::BucketBoundaries& SampleBuckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  return kBuckets;
}

}  // namespace

SelfMetrics::SelfMetrics(FileTree self_procfs)
    : self_procfs_(std::move(self_procfs)),
      start_time_seconds_(ReadProcessStartTime(self_procfs_).value_or(0)),
      reloads_ok_(Reloads(registry_, "success")),
      reloads_failed_(Reloads(registry_, "failure")),
      last_reload_successful_(GaugeOf(registry_, "iowatch_config_last_reload_successful",
                                      "1 when the last configuration (re)load succeeded.")),
      last_reload_success_time_(GaugeOf(registry_,
                                        "iowatch_config_last_reload_success_timestamp_seconds",
                                        "When the configuration was last loaded successfully.")),
      sample_duration_(BuildHistogram()
                           .Name("iowatch_sample_duration_seconds")
                           .Help("Time each sample took: every source read, parsed and derived.")
                           .Register(registry_)
                           .Add({}, SampleBuckets())),
      sample_lag_(GaugeOf(registry_, "iowatch_sample_lag_seconds",
                          "How late the last sample started against its schedule (event loop "
                          "delay).")),
      sample_age_(GaugeOf(registry_, "iowatch_sample_age_seconds",
                          "Age of the sample served, at scrape time.")) {
  BuildGauge()
      .Name("iowatch_build_info")
      .Help("Version and compiler of the running binary (always 1).")
      .Register(registry_)
      .Add({{"version", kVersion}, {"compiler", __VERSION__}})
      .Set(1);
}

void SelfMetrics::ConfigLoaded(bool ok, double now_unix_seconds) {
  (ok ? reloads_ok_ : reloads_failed_).Increment();
  last_reload_successful_.Set(ok ? 1 : 0);
  if (ok) last_reload_success_time_.Set(now_unix_seconds);
}

void SelfMetrics::SampleTaken(double duration_s, double lag_s) {
  sample_duration_.Observe(duration_s);
  sample_lag_.Set(lag_s);
}

void SelfMetrics::Render(double sample_age_s, std::string& out) const {
  sample_age_.Set(sample_age_s);
  std::vector<MetricFamily> families = registry_.Collect();
  for (MetricFamily& family : ProcessFamilies(self_procfs_, start_time_seconds_))
    families.push_back(std::move(family));
  AppendCollected(std::move(families), out);
}

}  // namespace iowatch::daemon
