// The run_conditions table (schema v3): one row per run whose conditions
// were measured; a run without one (stored before v3, or by a tool that
// does not measure them) reads back with conditions = nullopt, "unknown".
// Internal to the store. Thread-safety: as the Connection's.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "probes/baseline/run_record.h"
#include "probes/store/store_sqlite.h"

namespace iowatch::probes::internal {

// Inserts run.conditions (nothing when absent) for the run `run_id`.
Status InsertConditions(const Connection& db, int64_t run_id, const RunRecord& run);
// Sets run.conditions from its row, if any.
Status ReadConditions(const Connection& db, RunRecord& run);

}  // namespace iowatch::probes::internal
