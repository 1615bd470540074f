// FullResolution: DiurnalDisk's run (diurnal_disk.h) at full resolution in
// O(1). DiurnalDisk::Run draws a run's load, steal and latency (its day) and
// then materialises the run one I/O at a time (FillEqualLatencies: 37,500
// equal I/Os for an 80 µs disk), which over the fleet's 11.5 million runs
// takes hours. The simulation asks it for the run kScale times slower (the
// same draws, kScale times fewer I/Os) and rebuilds here the run it would
// have made at the drawn latency, from the summary: the same I/O count,
// statistics, histograms, metrics and conditions. CheckSameRun compares the
// two on each disk's first run.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "probes/verdicts/run_record.h"

namespace iowatch::fleet {

// Large enough to make the per-I/O loop cheap (~500 I/Os), small enough that a
// run 300 times the quiet latency still holds one I/O.
inline constexpr uint64_t kScale = 64;

// `slow` is the run DiurnalDisk made with its latency × kScale.
probes::RunRecord FullResolution(probes::RunRecord slow);

// "" when `fast` is the run DiurnalDisk would have made directly (`direct`),
// up to one I/O of rounding; else what differs.
std::string CheckSameRun(const probes::RunRecord& fast, const probes::RunRecord& direct);

}  // namespace iowatch::fleet
