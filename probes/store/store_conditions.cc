#include "probes/store/store_conditions.h"

#include <fmt/format.h>

namespace iowatch::probes::internal {
namespace {

constexpr std::string_view kColumns =
    "seconds, device_ios, device_bytes, device_busy_seconds, device_io_seconds, own_requests, "
    "own_bytes, own_io_seconds, io_pressure_some, io_pressure_full, cpu_steal, other_probe";

int64_t ToInt(uint64_t value) { return static_cast<int64_t>(value); }
uint64_t ToUint(int64_t value) { return value < 0 ? 0 : static_cast<uint64_t>(value); }

void BindOptional(Statement& statement, int index, const std::optional<double>& value) {
  if (value) {
    statement.Bind(index, *value);
  } else {
    statement.BindNull(index);
  }
}

}  // namespace

Status InsertConditions(const Connection& db, int64_t run_id, const RunRecord& run) {
  if (!run.conditions) return {};
  const RunConditions& c = *run.conditions;
  Result<Statement> insert =
      db.Prepare(fmt::format("INSERT INTO run_conditions (run_id, {}) VALUES "
                             "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                             kColumns),
                 "adding run conditions");
  if (!insert) return std::unexpected(insert.error());
  insert->Bind(1, run_id).Bind(2, c.seconds).Bind(3, ToInt(c.device_ios));
  insert->Bind(4, ToInt(c.device_bytes)).Bind(5, c.device_busy_seconds);
  insert->Bind(6, c.device_io_seconds).Bind(7, ToInt(c.own_requests));
  insert->Bind(8, ToInt(c.own_bytes)).Bind(9, c.own_io_seconds);
  BindOptional(*insert, 10, c.io_pressure_some);
  BindOptional(*insert, 11, c.io_pressure_full);
  insert->Bind(12, c.cpu_steal).Bind(13, int64_t{c.other_probe ? 1 : 0});
  return insert->Run();
}

Status ReadConditions(const Connection& db, RunRecord& run) {
  Result<Statement> select = db.Prepare(
      fmt::format("SELECT {} FROM run_conditions WHERE run_id = ?1", kColumns), "reading run");
  if (!select) return std::unexpected(select.error());
  select->Bind(1, run.id);
  return select->ForEachRow([&](const Statement& row) -> Status {
    RunConditions c;
    c.seconds = row.Real(0);
    c.device_ios = ToUint(row.Int(1));
    c.device_bytes = ToUint(row.Int(2));
    c.device_busy_seconds = row.Real(3);
    c.device_io_seconds = row.Real(4);
    c.own_requests = ToUint(row.Int(5));
    c.own_bytes = ToUint(row.Int(6));
    c.own_io_seconds = row.Real(7);
    if (!row.IsNull(8)) c.io_pressure_some = row.Real(8);
    if (!row.IsNull(9)) c.io_pressure_full = row.Real(9);
    c.cpu_steal = row.Real(10);
    c.other_probe = row.Int(11) != 0;
    run.conditions = c;
    return {};
  });
}

}  // namespace iowatch::probes::internal
