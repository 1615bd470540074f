// run_verdicts: whether each successful run was judged, and why not
// (store_schema.cc v8), for the share of runs judged and the last judged
// run across restarts.
#include "probes/store/store.h"
#include "probes/store/store_sqlite.h"

namespace iowatch::probes {

using internal::Statement;

Status Store::PutRunVerdict(int64_t run_id, bool judged, std::string_view reason) {
  Result<Statement> insert = connection_->Prepare(
      "INSERT OR REPLACE INTO run_verdicts (run_id, judged, reason) VALUES (?1, ?2, ?3)",
      "storing whether a run was judged");
  if (!insert) return ErrorOf(insert);
  insert->Bind(1, run_id).Bind(2, int64_t{judged ? 1 : 0}).Bind(3, reason);
  return insert->Run();
}

Result<std::vector<StoredRunVerdict>> Store::RunVerdictsSince(int64_t since_unix_ms) const {
  Result<Statement> select = connection_->Prepare(
      "SELECT r.job, r.start_unix_ms, v.judged, v.reason FROM run_verdicts v "
      "JOIN runs r ON r.id = v.run_id WHERE r.start_unix_ms >= ?1 "
      "ORDER BY r.start_unix_ms, r.id",
      "reading whether runs were judged");
  if (!select) return ErrorOf(select);
  select->Bind(1, since_unix_ms);
  std::vector<StoredRunVerdict> out;
  Status done = select->ForEachRow([&](const Statement& row) -> Status {
    out.push_back({row.Text(0), row.Int(1), row.Int(2) != 0, row.Text(3)});
    return {};
  });
  if (!done) return ErrorOf(done);
  return out;
}

Result<std::vector<std::pair<std::string, int64_t>>> Store::LastJudgedRuns() const {
  Result<Statement> select = connection_->Prepare(
      "SELECT r.job, MAX(r.start_unix_ms) FROM run_verdicts v JOIN runs r ON r.id = v.run_id "
      "WHERE v.judged = 1 GROUP BY r.job ORDER BY r.job",
      "reading the last judged runs");
  if (!select) return ErrorOf(select);
  std::vector<std::pair<std::string, int64_t>> out;
  Status done = select->ForEachRow([&](const Statement& row) -> Status {
    out.emplace_back(row.Text(0), row.Int(1));
    return {};
  });
  if (!done) return ErrorOf(done);
  return out;
}

Result<std::map<int64_t, StoredRunVerdict>> Store::RunVerdictsOf(
    std::span<const RunRecord> runs) const {
  Result<Statement> select =
      connection_->Prepare("SELECT judged, reason FROM run_verdicts WHERE run_id = ?1",
                           "reading whether runs were judged");
  if (!select) return ErrorOf(select);
  std::map<int64_t, StoredRunVerdict> out;
  for (const RunRecord& run : runs) {
    select->Reset();
    select->Bind(1, run.id);
    Result<bool> row = select->Step();
    if (!row) return ErrorOf(row);
    if (*row) out[run.id] = {run.job, run.start_unix_ms, select->Int(0) != 0, select->Text(1)};
  }
  return out;
}

}  // namespace iowatch::probes
