// SeriesBook: the verdict state of every probe series the recorder judges
// (SeriesState: hysteresis streaks, standing regressions, suspect
// spans), kept in memory for the runs and in the store for restarts, so that
// a restart neither needs K bad runs again to raise a standing regression
// nor lets a band learn from the runs of a suspect span.
//
// A series is a job's runs with one parameter fingerprint on one device.
// When a job's run opens another series (the job was edited, or its target
// moved to another disk), the job's other series are dropped, here and in the
// store: a stale series would otherwise keep its standing regression and
// stop every band of every job on its disk from learning. A series' state is
// stored after each of its runs (through_run_id), in one transaction with
// the verdicts of the runs it went through (run_verdicts); runs stored after
// that (a kill between the run and its state) are judged again, in order,
// before the series' next run (CatchUp), as they were live: from the runs
// stored up to each (JudgeRun), their verdicts stored with the next state.
// So a kill -9 at any moment loses nothing, and counts no run twice.
//
// Thread-safety: none; the recorder calls it with its store mutex held.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "probes/store/store.h"
#include "probes/verdicts/job_judge.h"

namespace iowatch::probes {

// A run of a series and its judgement, for the recorder to log, publish and
// store.
struct JudgedRun {
  RunRecord run;
  RunJudgement judgement;
};

class SeriesBook {
 public:
  // `rule`: a new series' tracker (the policy's hysteresis and span);
  // `jobs`: the configured jobs, whose stored states Load restores.
  SeriesBook(RegressionTracker rule, std::set<std::string> jobs);

  // Replaces the book with the store's states of the configured jobs. A
  // state that cannot be read (any job's) costs only its own series, which
  // starts afresh: its row is moved to the store's quarantine table and
  // named in one warning (the store file, the row's key, what was expected).
  void Load(Store& store, int64_t now_unix_ms);

  // The run's series, created if new (and stored at once, as of the run
  // before `run`, so that a kill before its first state is stored leaves
  // `run` to CatchUp); the job's other series are dropped (and their stored
  // states deleted).
  Result<SeriesState*> Open(Store& store, const RunRecord& run);
  // What the other series on the run's disk say.
  DeviceSuspicion Beside(const RunRecord& run) const;
  // Judges again the series' stored successful runs between its state and
  // `run` (left out by a kill), in the order they were stored, so that its
  // state is as of the run before; returns them with their judgements.
  Result<std::vector<JudgedRun>> CatchUp(const RunRecord& run, BaselineSource& source,
                                         const BaselinePolicy& policy, int64_t now_ms);
  // Stores the series' state as of `run` (its id set) and, in the same
  // transaction, the verdicts of `judged`: the runs judged since the state
  // stored last (those CatchUp judged again, then `run`).
  Status Save(Store& store, const RunRecord& run, std::span<const JudgedRun> judged);

  const SeriesState* Find(const RunRecord& run) const;

 private:
  struct Series {
    std::string job;
    std::string fingerprint;
    std::string device;
    int64_t through_run_id = 0;
    SeriesState state;
  };
  static void Quarantine(Store& store, const UnreadableSeriesState& row, int64_t now_unix_ms);
  static std::string KeyOf(std::string_view job, std::string_view fingerprint,
                           std::string_view device);

  RegressionTracker rule_;
  std::set<std::string> jobs_;
  std::map<std::string, Series> series_;
};

}  // namespace iowatch::probes
