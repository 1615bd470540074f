// The trace's what-if (`iowatch trace --what-if`): what larger, asynchronous
// I/O would buy an application on this disk. Each traced file's accesses,
// one step per (direction, pattern) in the order the application first used
// them, are replayed twice with the probe engine on a probe file of the
// file's size in a scratch directory (never on the application's files):
//   as traced   the application's average request size, one at a time
//               (psync, iodepth 1), buffered unless it used O_DIRECT, with
//               one fsync at the end of a write step if it fsynced the file
//   larger      MIO's pf module settings in its published example: 2 MiB
//               requests, direct, asynchronous, 4 in flight (read-ahead of 4)
// Random steps are replayed the same way both times: prefetching does not
// help them. Buffered steps start with the probe file's pages dropped. The
// ratio is as-traced seconds over larger seconds (MIO's example: 28m06s over
// 15m41s, 1.79).
// Thread-safety: plain values; RunWhatIf does I/O and runs one step at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "probes/spec/job_spec.h"

namespace iowatch::probes {

enum class TracedPattern { kSequential, kBackward, kRandom };

struct TracedAccess {
  bool write = false;
  TracedPattern pattern = TracedPattern::kSequential;
  uint64_t requests = 0;
  uint64_t bytes = 0;
};

struct WhatIfFile {
  std::string path;                    // the application's file: named, never opened
  uint64_t size = 0;                   // its size (or the furthest byte it reached)
  bool direct = false;                 // the application opened it O_DIRECT
  bool fsynced = false;                // it called fsync or fdatasync on it
  std::vector<TracedAccess> accesses;  // in the order first used
};

struct WhatIfSettings {
  std::string scratch_directory;  // where the probe file goes (created by the caller)
  uint64_t larger_request = uint64_t{2} << 20;
  uint32_t larger_depth = 4;
  EngineKind larger_engine = EngineKind::kIoUring;
};

struct WhatIfStep {
  TracedAccess access;
  JobSpec as_traced;
  JobSpec larger;  // == as_traced for a random step
  double as_traced_seconds = 0;
  double larger_seconds = 0;
};

// The probe file's size: the file's, rounded up to whole larger requests.
uint64_t WhatIfProbeSize(const WhatIfFile& file, const WhatIfSettings& settings);

// The two jobs of every step; an error when the file cannot be replayed (no
// reads or writes, a size of 0).
Result<std::vector<WhatIfStep>> PlanWhatIf(const WhatIfFile& file, const WhatIfSettings& settings);

// Runs the steps (RunProbe), filling in their seconds. `cancel`, when set,
// stops between and inside runs (an error then).
Status RunWhatIf(std::vector<WhatIfStep>& steps, const std::atomic<bool>* cancel);

// Sum of the steps' seconds; ratio = as traced / larger (0 when larger is 0).
struct WhatIfTotals {
  double as_traced_seconds = 0;
  double larger_seconds = 0;
  double ratio = 0;
};
WhatIfTotals TotalsOf(const std::vector<WhatIfStep>& steps);

}  // namespace iowatch::probes
