// A RegressionTracker's streaks as the store keeps them in a state's JSON
// (series_states and passive_states): one object per (op, metric), a streak
// without a shift as null (JSON has no infinity).
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "probes/verdicts/baseline.h"

namespace iowatch::probes::internal {

nlohmann::json TrackerToJson(const std::vector<RegressionTracker::Entry>& entries);
// Throws nlohmann's exceptions on a malformed document.
std::vector<RegressionTracker::Entry> TrackerFromJson(const nlohmann::json& doc);

}  // namespace iowatch::probes::internal
