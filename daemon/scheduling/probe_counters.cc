#include "daemon/scheduling/probe_counters.h"

#include <array>

#include "daemon/scheduling/probe_run.h"

namespace iowatch::daemon {
namespace {

constexpr std::array kResults = {RunResult::kOk, RunResult::kError, RunResult::kSkipped,
                                 RunResult::kCancelled, RunResult::kContended};
constexpr std::array<const char*, 2> kSkipReasons = {"busy", "abandoned_io"};

prometheus::Registry& Chosen(prometheus::Registry* given,
                             std::unique_ptr<prometheus::Registry>& own) {
  if (given != nullptr) return *given;
  own = std::make_unique<prometheus::Registry>();
  return *own;
}

uint64_t ValueOf(const prometheus::Counter& counter) {
  return static_cast<uint64_t>(counter.Value());
}

}  // namespace

ProbeCounters::ProbeCounters(prometheus::Registry* registry)
    : runs_(prometheus::BuildCounter()
                .Name("iowatch_probe_runs_total")
                .Help("Probe runs by result: ok, contended (completed while others' I/O on "
                      "the disk was above the contention level: judged only against runs of a "
                      "comparable load), error (an I/O error, the time limit, a target or "
                      "engine refused), skipped (given up after max_skips busy attempts), "
                      "cancelled (shutdown).")
                .Register(Chosen(registry, own_registry_))),
      skips_(prometheus::BuildCounter()
                 .Name("iowatch_probe_skips_total")
                 .Help("Probe attempts postponed, by reason.")
                 .Register(own_registry_ ? *own_registry_ : *registry)),
      store_errors_(prometheus::BuildCounter()
                        .Name("iowatch_probe_store_errors_total")
                        .Help("Probe runs whose storing (or baseline update) failed.")
                        .Register(own_registry_ ? *own_registry_ : *registry)
                        .Add({})),
      abandoned_ios_(prometheus::BuildCounter()
                         .Name("iowatch_probe_abandoned_ios_total")
                         .Help("I/Os a hung device still held when a run gave up waiting; their "
                               "context and buffers are kept until they complete.")
                         .Register(own_registry_ ? *own_registry_ : *registry)
                         .Add({})),
      held_ios_(prometheus::BuildGauge()
                    .Name("iowatch_probe_held_ios")
                    .Help("I/Os of probe runs that gave up on a hung device, still in flight: "
                          "their context and buffers are kept, and no probe runs on the device "
                          "until they complete (none at all beyond 4096).")
                    .Register(own_registry_ ? *own_registry_ : *registry)
                    .Add({})),
      stores_quarantined_(prometheus::BuildCounter()
                              .Name("iowatch_probe_store_quarantined_total")
                              .Help("Damaged store files (not a database, or corrupt) moved aside "
                                    "as iowatch.db.corrupt-<time> and replaced by a new store.")
                              .Register(own_registry_ ? *own_registry_ : *registry)
                              .Add({})) {}

void ProbeCounters::AddJob(const std::string& job) {
  for (const RunResult result : kResults) {
    runs_.Add({{"probe", job}, {"result", std::string(ToString(result))}});
  }
  for (const char* reason : kSkipReasons) skips_.Add({{"probe", job}, {"reason", reason}});
}

void ProbeCounters::CountRun(const std::string& job, RunResult result) {
  runs_.Add({{"probe", job}, {"result", std::string(ToString(result))}}).Increment();
}

void ProbeCounters::CountSkip(const std::string& job, const std::string& reason) {
  skips_.Add({{"probe", job}, {"reason", reason}}).Increment();
}

void ProbeCounters::CountStoreError() { store_errors_.Increment(); }

void ProbeCounters::CountStoreQuarantined() { stores_quarantined_.Increment(); }

void ProbeCounters::CountAbandonedIos(uint32_t ios) {
  abandoned_ios_.Increment(static_cast<double>(ios));
}

void ProbeCounters::SetHeldIos(uint32_t ios) { held_ios_.Set(static_cast<double>(ios)); }

RunCounts ProbeCounters::Runs(const std::string& job) const {
  const auto count = [&](RunResult result) {
    return ValueOf(runs_.Add({{"probe", job}, {"result", std::string(ToString(result))}}));
  };
  return RunCounts{count(RunResult::kOk), count(RunResult::kError), count(RunResult::kSkipped),
                   count(RunResult::kCancelled), count(RunResult::kContended)};
}

std::map<std::string, uint64_t> ProbeCounters::Skips(const std::string& job) const {
  std::map<std::string, uint64_t> out;
  for (const char* reason : kSkipReasons) {
    const uint64_t n = ValueOf(skips_.Add({{"probe", job}, {"reason", reason}}));
    if (n > 0) out[reason] = n;
  }
  return out;
}

uint64_t ProbeCounters::StoreErrors() const { return ValueOf(store_errors_); }

uint64_t ProbeCounters::StoresQuarantined() const { return ValueOf(stores_quarantined_); }

}  // namespace iowatch::daemon
