// The run_conditions table (schema v3): one row per run whose conditions
// were measured; a run without one (stored before v3, or by a tool that
// does not measure them) reads back with conditions = nullopt, "unknown".
// Internal to the store. Thread-safety: as the Connection's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "probes/store/store_sqlite.h"
#include "probes/verdicts/run_record.h"

namespace iowatch::probes::internal {

// Inserts run.conditions (nothing when absent) for the run `run_id`.
Status InsertConditions(const Connection& db, int64_t run_id, const RunRecord& run);
// Sets run.conditions from its row, if any (InsertConditions's reverse).
Status SelectConditions(const Connection& db, RunRecord& run);
// The table's columns, each with `prefix` ("c." in a join), comma-separated,
// in the order ConditionsAt reads them from column `first` of a row.
std::string ConditionColumns(std::string_view prefix);
RunConditions ConditionsAt(const Statement& row, int first);

}  // namespace iowatch::probes::internal
