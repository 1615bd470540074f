// ProgressMeter: what RunJob reports through RunOptions::on_progress. It
// counts the I/Os and bytes completed per direction since the run started
// (ramp included) and, about every interval, turns them into rates over the
// interval since the previous report, plus the fraction done and an ETA from
// where the run stands (RunPosition): by time for time-limited runs, by I/Os
// issued for amount-limited ones, whichever is further along.
// Thread-safety: none; it lives on the runner's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include "probes/run/job_runner.h"

namespace iowatch::probes {

// Where a run stands, as far as progress is concerned.
struct RunPosition {
  bool ramping = false;
  uint64_t ramp_end_ns = 0;        // when the ramp ends (read while ramping)
  uint64_t measured_start_ns = 0;  // when the measured phase began (read after the ramp)
  uint64_t runtime_ns = 0;         // 0: no runtime limit
  uint64_t ios_limit = 0;          // I/Os of the measured phase; 0 or UINT64_MAX: none
  uint64_t measured_issued = 0;    // I/Os issued in the measured phase
};

class ProgressMeter {
 public:
  // Reports go to `report` about every `interval` (1 s when not positive);
  // none at all when `report` is empty. `report` must outlive the meter.
  ProgressMeter(const std::function<void(const RunProgress&)>& report,
                std::chrono::nanoseconds interval);

  // The run starts at `now_ns`: the first interval begins.
  void Start(uint64_t now_ns);
  // When the next report is due; UINT64_MAX when nobody listens.
  uint64_t NextReportNs() const { return next_report_ns_; }
  // One I/O of direction `dir` (0 reads, 1 writes) moved `bytes`.
  void CountDone(int dir, uint64_t bytes) {
    ++done_ios_[dir];
    done_bytes_[dir] += bytes;
  }
  // Reports now and schedules the next report one interval later.
  void Report(uint64_t now_ns, const RunPosition& position);

 private:
  const std::function<void(const RunProgress&)>& report_;
  uint64_t interval_ns_;
  uint64_t next_report_ns_ = UINT64_MAX;
  uint64_t last_report_ns_ = 0;
  uint64_t done_ios_[2] = {0, 0};
  uint64_t done_bytes_[2] = {0, 0};
  uint64_t reported_ios_[2] = {0, 0};
  uint64_t reported_bytes_[2] = {0, 0};
};

}  // namespace iowatch::probes
