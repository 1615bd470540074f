// ProbeCounters: the scheduled probes' counters, as prometheus-cpp counters
// in a Registry that serve exposes with iowatch's own metrics: runs by job
// and result (ok, error, skipped, cancelled), attempts skipped by job and
// reason (busy, abandoned_io), runs whose storing failed, I/Os abandoned to
// a hung device and those still held. The scheduler and the
// recorder count where the events happen; their Status and snapshots read
// the same counters back, so there is one count of each thing.
// Thread-safety: prometheus-cpp's counters are thread-safe; so is this.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "daemon/scheduling/probe_run.h"

namespace iowatch::daemon {

class ProbeCounters {
 public:
  // Counts into `registry`; null: into a registry of its own (tests, and a
  // scheduler or recorder used alone).
  explicit ProbeCounters(prometheus::Registry* registry = nullptr);
  ProbeCounters(const ProbeCounters&) = delete;
  ProbeCounters& operator=(const ProbeCounters&) = delete;

  // Creates the job's series at 0, so rate() has them from the start.
  void AddJob(const std::string& job);
  void CountRun(const std::string& job, RunResult result);
  void CountSkip(const std::string& job, const std::string& reason);
  void CountStoreError();
  void CountAbandonedIos(uint32_t ios);
  void SetHeldIos(uint32_t ios);  // AbandonedIoPool's I/Os still held
  void CountStoreQuarantined();

  RunCounts Runs(const std::string& job) const;
  std::map<std::string, uint64_t> Skips(const std::string& job) const;  // reasons counted > 0
  uint64_t StoreErrors() const;
  uint64_t StoresQuarantined() const;

 private:
  std::unique_ptr<prometheus::Registry> own_registry_;  // when none was given
  prometheus::Family<prometheus::Counter>& runs_;
  prometheus::Family<prometheus::Counter>& skips_;
  prometheus::Counter& store_errors_;
  prometheus::Counter& abandoned_ios_;
  prometheus::Gauge& held_ios_;
  prometheus::Counter& stores_quarantined_;
};

}  // namespace iowatch::daemon
