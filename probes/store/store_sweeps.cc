#include <fmt/format.h>

#include "probes/store/store.h"
#include "probes/store/store_sqlite.h"

namespace iowatch::probes {

using internal::Statement;

Result<int64_t> Store::AddSweep(const SweepRecord& sweep) {
  Result<Statement> insert = connection_->Prepare(
      "INSERT INTO sweeps (started_unix_ms, device, identity, target, report_json) "
      "VALUES (?1, ?2, ?3, ?4, ?5)",
      "adding sweep");
  if (!insert) return ErrorOf(insert);
  insert->Bind(1, sweep.started_unix_ms)
      .Bind(2, sweep.device)
      .Bind(3, sweep.identity)
      .Bind(4, sweep.target)
      .Bind(5, sweep.report_json);
  if (Status done = insert->Run(); !done) return ErrorOf(done);
  return connection_->LastInsertId();
}

namespace {

SweepRecord SweepRow(const Statement& row, bool with_json) {
  SweepRecord sweep{row.Int(0), row.Int(1), row.Text(2), row.Text(3), row.Text(4), {}};
  if (with_json) sweep.report_json = row.Text(5);
  return sweep;
}

}  // namespace

Result<SweepRecord> Store::GetSweep(int64_t id) const {
  Result<Statement> select = connection_->Prepare(
      "SELECT id, started_unix_ms, device, identity, target, report_json FROM sweeps "
      "WHERE id = ?1",
      "reading sweep");
  if (!select) return ErrorOf(select);
  select->Bind(1, id);
  Result<bool> row = select->Step();
  if (!row) return ErrorOf(row);
  if (!*row) {
    return MakeError(ErrorCode::kNotFound, fmt::format("no sweep with id {}", id),
                     connection_->Path());
  }
  return SweepRow(*select, true);
}

Result<std::vector<SweepRecord>> Store::ListSweeps() const {
  Result<Statement> select = connection_->Prepare(
      "SELECT id, started_unix_ms, device, identity, target FROM sweeps ORDER BY id DESC",
      "listing sweeps");
  if (!select) return ErrorOf(select);
  std::vector<SweepRecord> sweeps;
  Status done = select->ForEachRow([&](const Statement& row) -> Status {
    sweeps.push_back(SweepRow(row, false));
    return {};
  });
  if (!done) return ErrorOf(done);
  return sweeps;
}

}  // namespace iowatch::probes
