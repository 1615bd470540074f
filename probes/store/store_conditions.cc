#include "probes/store/store_conditions.h"

#include <fmt/format.h>

#include <array>

namespace iowatch::probes::internal {
namespace {

constexpr std::array<std::string_view, 17> kColumnNames = {"seconds",
                                                           "device_ios",
                                                           "device_bytes",
                                                           "device_busy_seconds",
                                                           "device_io_seconds",
                                                           "own_requests",
                                                           "own_bytes",
                                                           "own_io_seconds",
                                                           "io_pressure_some",
                                                           "io_pressure_full",
                                                           "cpu_steal",
                                                           "other_probe",
                                                           "cpu_wait",
                                                           "before_seconds",
                                                           "before_device_ios",
                                                           "before_device_bytes",
                                                           "before_device_busy_seconds"};

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

std::string ConditionColumns(std::string_view prefix) {
  std::string out;
  for (std::string_view name : kColumnNames) {
    out += fmt::format("{}{}{}", out.empty() ? "" : ", ", prefix, name);
  }
  return out;
}

RunConditions ConditionsAt(const Statement& row, int first) {
  RunConditions c;
  c.seconds = row.Real(first);
  c.device_ios = ToUint(row.Int(first + 1));
  c.device_bytes = ToUint(row.Int(first + 2));
  c.device_busy_seconds = row.Real(first + 3);
  c.device_io_seconds = row.Real(first + 4);
  c.own_requests = ToUint(row.Int(first + 5));
  c.own_bytes = ToUint(row.Int(first + 6));
  c.own_io_seconds = row.Real(first + 7);
  if (!row.IsNull(first + 8)) c.io_pressure_some = row.Real(first + 8);
  if (!row.IsNull(first + 9)) c.io_pressure_full = row.Real(first + 9);
  c.cpu_steal = row.Real(first + 10);
  c.other_probe = row.Int(first + 11) != 0;
  if (!row.IsNull(first + 12)) c.cpu_wait = row.Real(first + 12);
  if (!row.IsNull(first + 13)) {
    c.before = LoadWindow{row.Real(first + 13), ToUint(row.Int(first + 14)),
                          ToUint(row.Int(first + 15)), row.Real(first + 16)};
  }
  return c;
}

Status InsertConditions(const Connection& db, int64_t run_id, const RunRecord& run) {
  if (!run.conditions) return {};
  const RunConditions& c = *run.conditions;
  Result<Statement> insert = db.Prepare(
      fmt::format("INSERT INTO run_conditions (run_id, {}) VALUES "
                  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
                  "?17, ?18)",
                  ConditionColumns("")),
      "adding run conditions");
  if (!insert) return ErrorOf(insert);
  insert->Bind(1, run_id).Bind(2, c.seconds).Bind(3, ToInt(c.device_ios));
  insert->Bind(4, ToInt(c.device_bytes)).Bind(5, c.device_busy_seconds);
  insert->Bind(6, c.device_io_seconds).Bind(7, ToInt(c.own_requests));
  insert->Bind(8, ToInt(c.own_bytes)).Bind(9, c.own_io_seconds);
  BindOptional(*insert, 10, c.io_pressure_some);
  BindOptional(*insert, 11, c.io_pressure_full);
  insert->Bind(12, c.cpu_steal).Bind(13, int64_t{c.other_probe ? 1 : 0});
  BindOptional(*insert, 14, c.cpu_wait);
  if (c.before) {
    insert->Bind(15, c.before->seconds).Bind(16, ToInt(c.before->device_ios));
    insert->Bind(17, ToInt(c.before->device_bytes)).Bind(18, c.before->device_busy_seconds);
  } else {
    for (int index = 15; index <= 18; ++index) insert->BindNull(index);
  }
  return insert->Run();
}

Status SelectConditions(const Connection& db, RunRecord& run) {
  Result<Statement> select = db.Prepare(
      fmt::format("SELECT {} FROM run_conditions WHERE run_id = ?1", ConditionColumns("")),
      "reading run");
  if (!select) return ErrorOf(select);
  select->Bind(1, run.id);
  return select->ForEachRow([&](const Statement& row) -> Status {
    run.conditions = ConditionsAt(row, 0);
    return {};
  });
}

}  // namespace iowatch::probes::internal
