// ProbeRecorder: the one place a probe outcome goes. For each outcome the
// scheduler reports it stores the run (ok and error runs that measured
// something; never a cancelled run, whose results are partial, nor a skip),
// hands a successful one to the judge (probes::RunJudge: baselines,
// hysteresis, drift, the judged share, the journal lines of what changed),
// logs each engine fallback of a successful run once per job (the snapshot
// carries them every run), prunes runs older than the retention once a day,
// and publishes a new immutable ProbeSnapshot for scrapes.
//
// The baseline is read back from the store on every run, so `iowatch baseline
// reset` and `capture` (another process) take effect at the next run; a new
// baseline (another id) restarts the job's hysteresis. A store that cannot be
// opened or written (missing rights, a full disk) does not stop anything:
// the figures and histograms are still published, store_up reads 0, each
// failed run counts in store_errors_total, the change of state is logged
// once, and the next run tries again (reopening the store if needed).
// Before each run is stored the store's file is checked (Store::CheckFile):
// one removed, replaced or truncated under the daemon (`rm`, `truncate -s0`)
// is closed, logged at error, and the run goes to the store then at the path
// (a truncated file is moved aside as damaged first): SQLite alone would go
// on writing into the old file, and every run since would be lost at the
// next start.
//
// Thread-safety: Record may be called from any thread (the probe worker for
// finished runs, the event loop for skips and time-outs); store work is
// serialised by one mutex and the published state by another, so Snapshot()
// (a scrape) never waits for the store. Outcomes without a measurement never
// touch the store, so the event loop never does store I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "common/file_tree.h"
#include "daemon/scheduling/probe_counters.h"
#include "daemon/scheduling/probe_run.h"
#include "daemon/scheduling/probe_snapshot.h"
#include "daemon/scheduling/retention_clock.h"
#include "probes/stats/latency_histogram.h"
#include "probes/store/store.h"
#include "probes/verdicts/baseline.h"
#include "probes/verdicts/book/run_judge.h"

namespace iowatch::daemon {

struct ProbeRecorderOptions {
  std::filesystem::path state_dir;  // created if missing; the store is <state_dir>/iowatch.db
  probes::BaselinePolicy baseline;
  std::chrono::milliseconds retention{90LL * 24 * 3600 * 1000};
  std::filesystem::path sysfs = "/sys";  // for the target device's model
  std::function<int64_t()> wall_ms;      // now, ms since the epoch; system_clock when empty
  std::function<int64_t()> steady_ms;    // a monotonic clock in ms; steady_clock when empty
  // Where failed stores are counted (serve's registry); null: counters of
  // the recorder's own. Must outlive the recorder.
  ProbeCounters* counters = nullptr;
  // Names who did the foreign I/O on a whole disk, for a contended run's log
  // line and status, e.g. "in the last 60 s: postgresql.service up to 96.0
  // MB/s" (daemon/sampling/foreign_load.h); "" when unknown. Called on the
  // recording thread. Empty: not named.
  std::function<std::string(DeviceId disk)> name_foreign_load;
};

class ProbeRecorder {
 public:
  // `jobs`: the scheduled jobs' names, in configuration order. Tries to open
  // the store at once, so store_up is meaningful before the first run.
  ProbeRecorder(ProbeRecorderOptions options, const std::vector<std::string>& jobs);
  ~ProbeRecorder();
  ProbeRecorder(const ProbeRecorder&) = delete;
  ProbeRecorder& operator=(const ProbeRecorder&) = delete;

  // ProbeScheduler's outcome sink.
  void Record(const ScheduledJob& job, const RunOutcome& outcome);

  std::shared_ptr<const ProbeSnapshot> Snapshot() const;

 private:
  struct JobState {
    ProbeJobSnapshot published;
    std::map<std::string, probes::LatencyHistogram> clat;  // by op, since start
    std::map<std::string, double> clat_sum_seconds;
    std::set<std::string> logged_fallbacks;  // engine fallbacks already logged
  };
  // What the store side found out about one run, for the published state:
  // nothing when the run was not judged (an error run, a store down).
  using Stored = std::optional<probes::RunVerdicts>;

  int64_t NowMs() const;
  int64_t SteadyMs() const;
  // Once a day by the retention clock: deletes the runs older than the
  // retention (store mutex held).
  Status PruneIfDue();
  std::string StorePath() const;
  bool EnsureStore();  // store mutex held
  // The store's file as it was opened (Store::CheckFile), before each run:
  // one removed or replaced under the daemon is closed and the store at the
  // path opened again, a truncated one moved aside first (QuarantineStore);
  // logged at error. False when no store could be opened (store mutex held).
  bool EnsureSameFile();
  // Moves a damaged store aside (Store::Quarantine), logged and counted.
  bool QuarantineStore(const Error& why);
  // Logs a change of state once; `count` adds a failed run to the errors.
  void SetStoreState(bool up, const std::string& why, bool count);
  // The run as the store keeps it.
  probes::RunRecord ToRecord(const ScheduledJob& job, const RunOutcome& outcome,
                             const std::vector<probes::MetricSample>& metrics) const;
  Stored StoreRun(const ScheduledJob& job, const RunOutcome& outcome,
                  const std::vector<probes::MetricSample>& metrics);  // store mutex held
  std::string ModelOf(DeviceId device) const;  // the whole disk's device/model, or ""
  void Publish();                              // state mutex held
  // The job's state, added (after the configured jobs) for a job not
  // configured (state mutex held).
  JobState& JobStateFor(const std::string& name);
  // Publishes the run's engine fallbacks and logs each once per job (state
  // mutex held).
  static void NoteFallbacks(const std::string& job, const probes::ProbeResult& result,
                            JobState& state);
  // Adds the run's completion latencies to the job's totals since start
  // (state mutex held).
  static void MergeLatencies(const probes::ProbeResult& result, JobState& state);
  // Publishes the baseline the run was judged against, the verdicts and why
  // it was or was not judged (state mutex held).
  static void ApplyBaseline(const probes::RunVerdicts& stored, JobState& state);
  // Logs, once per change, that a job's runs became contended (what the
  // foreign load was, and whether a band baseline still judged them) or
  // clean again (state mutex held).
  void NoteContention(const std::string& job, const std::string& device,
                      const probes::RunVerdicts& stored, const ProbeJobSnapshot& before,
                      const std::vector<probes::MetricSample>& metrics) const;

  const ProbeRecorderOptions options_;
  const FileTree sysfs_;
  std::unique_ptr<ProbeCounters> own_counters_;  // when options_.counters is null
  ProbeCounters* counters_;
  const std::string kernel_;

  std::mutex store_mutex_;  // store_, retention_clock_, last_prune_ms_
  std::optional<probes::Store> store_;
  std::optional<RetentionClock> retention_clock_;  // anchored when store_ opens
  int64_t last_prune_ms_ = 0;                      // by retention_clock_
  // Judges the stored runs: the verdict state per series, kept across runs
  // and restarts, and each job's judged share.
  probes::RunJudge judge_;

  mutable std::mutex state_mutex_;  // everything below
  std::vector<std::string> order_;
  std::map<std::string, JobState, std::less<>> jobs_;
  bool store_up_ = false;
  bool store_state_known_ = false;
  std::shared_ptr<const ProbeSnapshot> snapshot_;
};

}  // namespace iowatch::daemon
