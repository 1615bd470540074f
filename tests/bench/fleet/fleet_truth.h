// The simulation's ground truth and summary: the injected faults (disk, kind,
// start; the firmware update's model, revisions and rollout), what the judge
// did on each faulty disk (its first raise), and what was emitted, as JSON
// for run.py to score the alerts against; a few lines for a person.
// Thread-safety: reentrant.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "tests/bench/fleet/disk_timeline.h"
#include "tests/bench/fleet/import_lines.h"

namespace iowatch::fleet {

struct FleetResult {
  std::vector<DiskCounts> disks;  // as fleet.disks
  LineCounts lines;
};

void PrintSummary(const Fleet& fleet, const RecordedSpread& noise, const FleetResult& result,
                  double seconds, FILE* out);
bool WriteTruth(const Fleet& fleet, const RecordedSpread& noise, const FleetResult& result,
                const std::string& path);

}  // namespace iowatch::fleet
