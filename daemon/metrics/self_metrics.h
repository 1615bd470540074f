// SelfMetrics: iowatch's own instrumentation, in a prometheus-cpp Registry
// whose counters, gauges and histograms are updated where the events happen
// (thread-safe, by prometheus-cpp): the HTTP server counts its requests in it
// (daemon/http/server_metrics.h), serve its samples and configuration loads,
// the probe service its runs and store errors; plus the build and the
// standard process_* families, read from /proc/self at scrape time (the start
// time once, at construction). Render() appends all of it after the sample's
// families (collected_metrics.h).
// Thread-safety: every method may be called from any thread.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>

#include "common/file_tree.h"

namespace iowatch::daemon {

class SelfMetrics {
 public:
  // `self_procfs` is the real /proc: iowatch reports on itself, never on a
  // fixture tree.
  explicit SelfMetrics(FileTree self_procfs = FileTree("/proc"));
  SelfMetrics(const SelfMetrics&) = delete;
  SelfMetrics& operator=(const SelfMetrics&) = delete;

  prometheus::Registry& registry() { return registry_; }

  // A (re)load of the configuration: `ok` false when it was refused.
  void ConfigLoaded(bool ok, double now_unix_seconds);
  // A sample taken in `duration_s`, started `lag_s` after its schedule.
  void SampleTaken(double duration_s, double lag_s);
  // Appends every family, with the age of the sample being served.
  void Render(double sample_age_s, std::string& out) const;

 private:
  const FileTree self_procfs_;
  const double start_time_seconds_;  // 0 when /proc could not say
  prometheus::Registry registry_;
  prometheus::Counter& reloads_ok_;
  prometheus::Counter& reloads_failed_;
  prometheus::Gauge& last_reload_successful_;
  prometheus::Gauge& last_reload_success_time_;
  prometheus::Histogram& sample_duration_;
  prometheus::Gauge& sample_lag_;
  prometheus::Gauge& sample_age_;
};

}  // namespace iowatch::daemon
