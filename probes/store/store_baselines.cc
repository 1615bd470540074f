// Store: baselines (tables baselines, baseline_metrics, baseline_runs) and
// their JSON export and import.
#include <cmath>
#include <span>
#include <utility>

#include "common/utf8.h"
#include "probes/store/store.h"
#include "probes/store/store_json.h"
#include "probes/store/store_sqlite.h"

namespace iowatch::probes {
namespace {

using internal::Connection;
using internal::Statement;
using internal::Transaction;

constexpr std::string_view kPutWhat = "storing baseline";

Status Validate(const Connection& db, const Baseline& b) {
  if (b.job.empty() || b.fingerprint.empty() || b.device.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "a baseline needs a job, a fingerprint and a device", db.Path());
  }
  for (const std::string* name : {&b.job, &b.device, &b.model}) {
    if (ControlCharacterAt(*name)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("baseline of job {:?}: a job, device or model name with a "
                                   "control character ({:?}) cannot be stored",
                                   b.job, *name),
                       db.Path());
    }
  }
  for (const MetricBaseline& m : b.metrics) {
    if (!std::isfinite(m.median) || !std::isfinite(m.spread)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("baseline of job \"{}\": {} {} is not finite (median {}, "
                                   "spread {})",
                                   b.job, m.op, m.metric, m.median, m.spread),
                       db.Path());
    }
  }
  return {};
}

// The baseline's metrics, in order (read back by rowid).
Status WriteMetrics(const Connection& db, int64_t id, std::span<const MetricBaseline> metrics) {
  Result<Statement> metric = db.Prepare(
      "INSERT INTO baseline_metrics (baseline_id, op, metric, median, spread, samples, "
      "interval_low, interval_high) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
      kPutWhat);
  if (!metric) return ErrorOf(metric);
  for (const MetricBaseline& m : metrics) {
    metric->Reset();
    metric->Bind(1, id).Bind(2, m.op).Bind(3, m.metric).Bind(4, m.median).Bind(5, m.spread);
    metric->Bind(6, static_cast<int64_t>(m.samples))
        .Bind(7, m.interval_low)
        .Bind(8, m.interval_high);
    if (Status done = metric->Run(); !done) return done;
  }
  return {};
}

// Links the baseline to the runs it was built from, each of which must exist.
Status WriteRunLinks(const Connection& db, int64_t id, const Baseline& b) {
  // The foreign key would refuse a missing run too, but could not say which.
  Result<Statement> exists = db.Prepare("SELECT 1 FROM runs WHERE id = ?1", kPutWhat);
  Result<Statement> link =
      db.Prepare("INSERT INTO baseline_runs (baseline_id, run_id) VALUES (?1, ?2)", kPutWhat);
  if (!exists) return ErrorOf(exists);
  if (!link) return ErrorOf(link);
  for (int64_t run_id : b.run_ids) {
    exists->Reset();
    exists->Bind(1, run_id);
    Result<bool> found = exists->Step();
    if (!found) return ErrorOf(found);
    if (!*found) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("baseline of job \"{}\" refers to run {}, which is not in "
                                   "the store",
                                   b.job, run_id),
                       db.Path());
    }
    link->Reset();
    link->Bind(1, id).Bind(2, run_id);
    if (Status done = link->Run(); !done) return done;
  }
  return {};
}

// Inside the caller's write transaction.
Result<int64_t> WriteBaseline(const Connection& db, const Baseline& b, bool pinned,
                              int64_t run_count) {
  if (Status valid = Validate(db, b); !valid) return ErrorOf(valid);
  Result<Statement> remove = db.Prepare(
      "DELETE FROM baselines WHERE job = ?1 AND fingerprint = ?2 AND device = ?3 AND band = ?4",
      kPutWhat);
  if (!remove) return ErrorOf(remove);
  remove->Bind(1, b.job).Bind(2, b.fingerprint).Bind(3, b.device).Bind(4, int64_t{b.band});
  if (Status done = remove->Run(); !done) return ErrorOf(done);

  Result<Statement> insert = db.Prepare(
      "INSERT INTO baselines (job, fingerprint, device, model, created_unix_ms, pinned, "
      "run_count, band) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
      kPutWhat);
  if (!insert) return ErrorOf(insert);
  insert->Bind(1, b.job)
      .Bind(2, b.fingerprint)
      .Bind(3, b.device)
      .Bind(4, b.model)
      .Bind(5, b.created_unix_ms)
      .Bind(6, int64_t{pinned ? 1 : 0})
      .Bind(7, run_count)
      .Bind(8, int64_t{b.band});
  if (Status done = insert->Run(); !done) return ErrorOf(done);
  const int64_t id = db.LastInsertId();

  if (Status done = WriteMetrics(db, id, b.metrics); !done) return ErrorOf(done);
  if (Status done = WriteRunLinks(db, id, b); !done) return ErrorOf(done);
  return id;
}

// Reads the baselines the (bound) statement selects, with their metrics and
// runs, in the statement's order. The caller holds a read transaction.
Result<std::vector<StoredBaseline>> ReadBaselines(const Connection& db, Statement& select) {
  std::vector<StoredBaseline> out;
  for (;;) {
    Result<bool> row = select.Step();
    if (!row) return ErrorOf(row);
    if (!*row) break;
    StoredBaseline stored;
    stored.id = select.Int(0);
    stored.baseline.job = select.Text(1);
    stored.baseline.fingerprint = select.Text(2);
    stored.baseline.device = select.Text(3);
    stored.baseline.model = select.Text(4);
    stored.baseline.created_unix_ms = select.Int(5);
    stored.pinned = select.Int(6) != 0;
    stored.run_count = select.Int(7);
    stored.baseline.band = static_cast<int>(select.Int(8));
    out.push_back(std::move(stored));
  }
  Result<Statement> metrics = db.Prepare(
      "SELECT op, metric, median, spread, samples, interval_low, interval_high "
      "FROM baseline_metrics WHERE baseline_id = ?1 ORDER BY rowid",
      "reading baselines");
  Result<Statement> runs =
      db.Prepare("SELECT run_id FROM baseline_runs WHERE baseline_id = ?1 ORDER BY rowid",
                 "reading baselines");
  if (!metrics) return ErrorOf(metrics);
  if (!runs) return ErrorOf(runs);
  for (StoredBaseline& stored : out) {
    metrics->Reset();
    metrics->Bind(1, stored.id);
    Status read = metrics->ForEachRow([&](const Statement& row) -> Status {
      stored.baseline.metrics.push_back(
          MetricBaseline{row.Text(0), row.Text(1), row.Real(2), row.Real(3),
                         static_cast<uint64_t>(row.Int(4)), row.Real(5), row.Real(6)});
      return {};
    });
    if (!read) return ErrorOf(read);
    runs->Reset();
    runs->Bind(1, stored.id);
    read = runs->ForEachRow([&](const Statement& row) -> Status {
      stored.baseline.run_ids.push_back(row.Int(0));
      return {};
    });
    if (!read) return ErrorOf(read);
  }
  return out;
}

constexpr std::string_view kBaselineColumns =
    "id, job, fingerprint, device, model, created_unix_ms, pinned, run_count, band";

}  // namespace

Result<int64_t> Store::PutBaseline(const Baseline& baseline, bool pinned) {
  const Connection& db = *connection_;
  Result<Transaction> transaction = Transaction::Begin(db, kPutWhat);
  if (!transaction) return ErrorOf(transaction);
  Result<int64_t> id =
      WriteBaseline(db, baseline, pinned, static_cast<int64_t>(baseline.run_ids.size()));
  if (!id) return id;
  if (Status done = transaction->Commit(); !done) return ErrorOf(done);
  return id;
}

Result<std::optional<StoredBaseline>> Store::GetBaseline(std::string_view job,
                                                         std::string_view fingerprint,
                                                         std::string_view device, int band) const {
  Result<std::vector<StoredBaseline>> found = SeriesBaselines(job, fingerprint, device);
  if (!found) return ErrorOf(found);
  for (StoredBaseline& stored : *found) {
    if (stored.baseline.band == band) return std::optional<StoredBaseline>(std::move(stored));
  }
  return std::optional<StoredBaseline>();
}

Result<std::vector<StoredBaseline>> Store::SeriesBaselines(std::string_view job,
                                                           std::string_view fingerprint,
                                                           std::string_view device) const {
  const Connection& db = *connection_;
  Result<Transaction> snapshot =
      Transaction::Begin(db, "reading baselines", Transaction::Kind::kRead);
  if (!snapshot) return ErrorOf(snapshot);
  Result<Statement> select = db.Prepare(
      fmt::format("SELECT {} FROM baselines WHERE job = ?1 AND fingerprint = ?2 AND device = ?3 "
                  "ORDER BY band",
                  kBaselineColumns),
      "reading baselines");
  if (!select) return ErrorOf(select);
  select->Bind(1, job).Bind(2, fingerprint).Bind(3, device);
  return ReadBaselines(db, *select);
}

Result<std::vector<StoredBaseline>> Store::ListBaselines() const {
  const Connection& db = *connection_;
  Result<Transaction> snapshot =
      Transaction::Begin(db, "reading baselines", Transaction::Kind::kRead);
  if (!snapshot) return ErrorOf(snapshot);
  Result<Statement> select =
      db.Prepare(fmt::format("SELECT {} FROM baselines ORDER BY job, fingerprint, device, band",
                             kBaselineColumns),
                 "reading baselines");
  if (!select) return ErrorOf(select);
  return ReadBaselines(db, *select);
}

Result<int64_t> Store::DeleteLoadBandBaselines(std::string_view job, std::string_view fingerprint,
                                               std::string_view device) {
  const Connection& db = *connection_;
  Result<Statement> remove = db.Prepare(
      "DELETE FROM baselines WHERE job = ?1 AND fingerprint = ?2 AND device = ?3 AND band <> 0",
      "deleting load-band baselines");
  if (!remove) return ErrorOf(remove);
  remove->Bind(1, job).Bind(2, fingerprint).Bind(3, device);
  if (Status done = remove->Run(); !done) return ErrorOf(done);
  return db.Changes();
}

Result<int64_t> Store::DeleteBaselines(std::string_view job) {
  // The cascades drop the baselines' metrics and run links, not the runs;
  // the reset mark makes the learner skip those runs (store_schema.cc v2).
  const Connection& db = *connection_;
  Result<Transaction> transaction = Transaction::Begin(db, "deleting baselines");
  if (!transaction) return ErrorOf(transaction);
  Result<Statement> remove =
      db.Prepare("DELETE FROM baselines WHERE job = ?1", "deleting baselines");
  if (!remove) return ErrorOf(remove);
  remove->Bind(1, job);
  if (Status done = remove->Run(); !done) return ErrorOf(done);
  const int64_t deleted = db.Changes();
  Result<Statement> mark = db.Prepare(
      "INSERT OR REPLACE INTO baseline_resets (job, after_run_id) VALUES (?1, "
      "COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'runs'), 0))",
      "marking the reset");
  if (!mark) return ErrorOf(mark);
  mark->Bind(1, job);
  if (Status done = mark->Run(); !done) return ErrorOf(done);
  if (Status done = transaction->Commit(); !done) return ErrorOf(done);
  return deleted;
}

Result<int64_t> Store::ImportBaselines(std::string_view json, std::string_view source) {
  // Parsed and checked whole before the first write: a bad document changes
  // nothing.
  Result<std::vector<StoredBaseline>> baselines = BaselinesFromJson(json, source);
  if (!baselines) return ErrorOf(baselines);
  return PinBaselines(*baselines);
}

Result<int64_t> Store::PinBaselines(std::span<const StoredBaseline> baselines) {
  // One transaction: a full disk halfway leaves none of them.
  const Connection& db = *connection_;
  Result<Transaction> transaction = Transaction::Begin(db, "importing baselines");
  if (!transaction) return ErrorOf(transaction);
  for (const StoredBaseline& stored : baselines) {
    Result<int64_t> id = WriteBaseline(db, stored.baseline, true, stored.run_count);
    if (!id) return ErrorOf(id);
  }
  if (Status done = transaction->Commit(); !done) return ErrorOf(done);
  return static_cast<int64_t>(baselines.size());
}

}  // namespace iowatch::probes
