// Store: writing and reading runs (tables runs, run_ops, run_metrics).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "common/terminal_text.h"
#include "probes/store/store.h"
#include "probes/store/store_codec.h"
#include "probes/store/store_conditions.h"
#include "probes/store/store_sqlite.h"

namespace iowatch::probes {
namespace {

using internal::Connection;
using internal::InsertConditions;
using internal::SelectConditions;
using internal::Statement;
using internal::Transaction;

// SQLite integers are signed 64-bit; counters keep their bits (schema notes).
int64_t ToInt(uint64_t value) { return static_cast<int64_t>(value); }
uint64_t ToUint(int64_t value) { return static_cast<uint64_t>(value); }

constexpr std::string_view kRunColumns =
    "id, job, fingerprint, job_options, device, model, kernel, start_unix_ms, duration_ms, "
    "result, error, run_end, elapsed_ns, fsyncs, cpu_user_seconds, cpu_system_seconds, "
    "voluntary_switches, involuntary_switches, io_error_code, io_error_message, io_error_path, "
    "io_error_errno";

constexpr std::array kRunEnds{RunEnd::kCompleted, RunEnd::kInterrupted, RunEnd::kTimedOut,
                              RunEnd::kFailed};

bool IsEmpty(const DirectionStats& d) {
  return d.ios == 0 && d.bytes == 0 && d.short_ios == 0 && d.errors == 0 &&
         d.runtime.count() == 0 && d.slat.Count() == 0 && d.clat.Count() == 0 &&
         d.lat.Count() == 0 && d.clat_histogram.Count() == 0 && d.lat_histogram.Count() == 0;
}

Status InsertRun(const Connection& db, const RunRecord& run, int64_t& id) {
  Result<Statement> insert = db.Prepare(
      "INSERT INTO runs (job, fingerprint, job_options, device, model, kernel, start_unix_ms, "
      "duration_ms, result, error, run_end, elapsed_ns, fsyncs, cpu_user_seconds, "
      "cpu_system_seconds, voluntary_switches, involuntary_switches, io_error_code, "
      "io_error_message, io_error_path, io_error_errno) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
      "?19, ?20, ?21)",
      "adding run");
  if (!insert) return ErrorOf(insert);
  const ProbeResult& r = run.result;
  insert->Bind(1, run.job)
      .Bind(2, run.fingerprint.empty() ? JobFingerprint(r.spec) : run.fingerprint)
      .Bind(3, run.job_options.empty() ? JobOptionsText(r.spec) : run.job_options)
      .Bind(4, run.device)
      .Bind(5, run.model)
      .Bind(6, run.kernel)
      .Bind(7, run.start_unix_ms)
      .Bind(8, run.duration_ms)
      .Bind(9, run.ok ? "ok" : "error")
      .Bind(10, run.error)
      .Bind(11, ToString(r.end))
      .Bind(12, static_cast<int64_t>(r.elapsed.count()))
      .Bind(13, ToInt(r.fsyncs))
      .Bind(14, r.cpu.user_seconds)
      .Bind(15, r.cpu.system_seconds)
      .Bind(16, ToInt(r.cpu.voluntary_switches))
      .Bind(17, ToInt(r.cpu.involuntary_switches));
  if (r.error) {
    insert->Bind(18, static_cast<int64_t>(r.error->code))
        .Bind(19, r.error->message)
        .Bind(20, r.error->path)
        .Bind(21, static_cast<int64_t>(r.error->os_errno));
  } else {
    for (int i = 18; i <= 21; ++i) insert->BindNull(i);
  }
  if (Status done = insert->Run(); !done) return done;
  id = db.LastInsertId();
  return {};
}

Status InsertOp(const Connection& db, int64_t run_id, std::string_view op,
                const DirectionStats& d) {
  Result<Statement> insert = db.Prepare(
      "INSERT INTO run_ops (run_id, op, ios, bytes, short_ios, errors, runtime_ns, "
      "slat_n, slat_min_ns, slat_max_ns, slat_mean_ns, slat_stddev_ns, "
      "clat_n, clat_min_ns, clat_max_ns, clat_mean_ns, clat_stddev_ns, "
      "lat_n, lat_min_ns, lat_max_ns, lat_mean_ns, lat_stddev_ns, clat_histogram, lat_histogram) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
      "?19, ?20, ?21, ?22, ?23, ?24)",
      "adding run");
  if (!insert) return ErrorOf(insert);
  insert->Bind(1, run_id)
      .Bind(2, op)
      .Bind(3, ToInt(d.ios))
      .Bind(4, ToInt(d.bytes))
      .Bind(5, ToInt(d.short_ios))
      .Bind(6, ToInt(d.errors))
      .Bind(7, static_cast<int64_t>(d.runtime.count()));
  int column = 8;
  for (const RunningStats* stats : {&d.slat, &d.clat, &d.lat}) {
    insert->Bind(column, ToInt(stats->Count()))
        .Bind(column + 1, ToInt(stats->Min()))
        .Bind(column + 2, ToInt(stats->Max()))
        .Bind(column + 3, stats->Mean())
        .Bind(column + 4, stats->StdDev());
    column += 5;
  }
  insert->BindBlob(23, EncodeHistogram(d.clat_histogram))
      .BindBlob(24, EncodeHistogram(d.lat_histogram));
  return insert->Run();
}

Status InsertMetrics(const Connection& db, int64_t run_id, std::span<const MetricSample> metrics) {
  if (metrics.empty()) return {};
  Result<Statement> insert =
      db.Prepare("INSERT INTO run_metrics (run_id, op, metric, value) VALUES (?1, ?2, ?3, ?4)",
                 "adding run metrics");
  if (!insert) return ErrorOf(insert);
  for (const MetricSample& sample : metrics) {
    insert->Reset();
    insert->Bind(1, run_id).Bind(2, sample.op).Bind(3, sample.metric);
    // SQLite turns a NaN into NULL anyway; saying so keeps it deliberate.
    if (std::isnan(sample.value)) {
      insert->BindNull(4);
    } else {
      insert->Bind(4, sample.value);
    }
    if (Status done = insert->Run(); !done) return done;
  }
  return {};
}

// One row of SELECT kRunColumns, without the directions and metrics.
Result<RunRecord> ReadRunRow(const Connection& db, const Statement& row) {
  RunRecord run;
  run.id = row.Int(0);
  run.job = row.Text(1);
  run.fingerprint = row.Text(2);
  run.job_options = row.Text(3);
  run.device = row.Text(4);
  run.model = row.Text(5);
  run.kernel = row.Text(6);
  run.start_unix_ms = row.Int(7);
  run.duration_ms = row.Int(8);
  run.ok = row.Text(9) == "ok";
  run.error = row.Text(10);
  const std::string end = row.Text(11);
  const auto* found =
      std::find_if(kRunEnds.begin(), kRunEnds.end(), [&](RunEnd e) { return ToString(e) == end; });
  if (found == kRunEnds.end()) {
    return MakeError(ErrorCode::kParse,
                     fmt::format("run {}: unknown run_end \"{}\"", run.id, TerminalText(end)),
                     db.Path());
  }
  ProbeResult& r = run.result;
  if (Result<JobSpec> spec = ParseJobOptionsText(run.job_options)) r.spec = std::move(*spec);
  r.end = *found;
  r.elapsed = std::chrono::nanoseconds(row.Int(12));
  r.fsyncs = ToUint(row.Int(13));
  r.cpu.user_seconds = row.Real(14);
  r.cpu.system_seconds = row.Real(15);
  r.cpu.voluntary_switches = ToUint(row.Int(16));
  r.cpu.involuntary_switches = ToUint(row.Int(17));
  if (!row.IsNull(18)) {
    const int64_t code = row.Int(18);
    const bool known = code >= 0 && code <= static_cast<int64_t>(ErrorCode::kUnsupported);
    r.error = Error{.code = known ? static_cast<ErrorCode>(code) : ErrorCode::kIo,
                    .message = row.Text(19),
                    .path = row.Text(20),
                    .os_errno = static_cast<int>(row.Int(21))};
  }
  return run;
}

Status ReadOps(const Connection& db, RunRecord& run) {
  Result<Statement> select = db.Prepare(
      "SELECT op, ios, bytes, short_ios, errors, runtime_ns, "
      "slat_n, slat_min_ns, slat_max_ns, slat_mean_ns, slat_stddev_ns, "
      "clat_n, clat_min_ns, clat_max_ns, clat_mean_ns, clat_stddev_ns, "
      "lat_n, lat_min_ns, lat_max_ns, lat_mean_ns, lat_stddev_ns, clat_histogram, lat_histogram "
      "FROM run_ops WHERE run_id = ?1",
      "reading run");
  if (!select) return ErrorOf(select);
  select->Bind(1, run.id);
  return select->ForEachRow([&](const Statement& row) -> Status {
    const std::string op = row.Text(0);
    DirectionStats& d = op == "write" ? run.result.write : run.result.read;
    d.ios = ToUint(row.Int(1));
    d.bytes = ToUint(row.Int(2));
    d.short_ios = ToUint(row.Int(3));
    d.errors = ToUint(row.Int(4));
    d.runtime = std::chrono::nanoseconds(row.Int(5));
    int column = 6;
    for (RunningStats* stats : {&d.slat, &d.clat, &d.lat}) {
      *stats = RunningStats::FromSummary(ToUint(row.Int(column)), ToUint(row.Int(column + 1)),
                                         ToUint(row.Int(column + 2)), row.Real(column + 3),
                                         row.Real(column + 4));
      column += 5;
    }
    // A histogram that does not decode (a damaged page, a file edited by
    // hand) costs the run its percentiles, not the whole read: one such row
    // failed every listing and relearn of its job.
    for (auto [index, name, histogram] :
         {std::tuple{21, "clat", &d.clat_histogram}, std::tuple{22, "lat", &d.lat_histogram}}) {
      Result<LatencyHistogram> decoded = DecodeHistogram(row.Blob(index));
      if (decoded) {
        *histogram = std::move(*decoded);
      } else {
        run.damage.push_back(fmt::format("{} {} histogram: {}", op, name, decoded.error().message));
      }
    }
    return {};
  });
}

Status ReadMetrics(const Connection& db, RunRecord& run) {
  Result<Statement> select = db.Prepare(
      "SELECT op, metric, value FROM run_metrics WHERE run_id = ?1 ORDER BY rowid", "reading run");
  if (!select) return ErrorOf(select);
  select->Bind(1, run.id);
  return select->ForEachRow([&](const Statement& row) -> Status {
    const double value = row.IsNull(2) ? std::numeric_limits<double>::quiet_NaN() : row.Real(2);
    run.metrics.push_back(MetricSample{row.Text(0), row.Text(1), value});
    return {};
  });
}

// Adds the metrics a run stored by an older iowatch lacks (the lat
// percentiles came with the load-band verdicts, schema v4), computed from its stored figures and
// histograms; a run stored without any gets them all.
void CompleteMetrics(RunRecord& run) {
  for (MetricSample& computed : ExtractMetrics(run.result)) {
    const bool stored = std::ranges::any_of(run.metrics, [&](const MetricSample& m) {
      return m.op == computed.op && m.metric == computed.metric;
    });
    if (!stored) run.metrics.push_back(std::move(computed));
  }
}

// Runs the SELECT (already bound) and completes each run; the caller holds a
// read transaction so the rows and their details come from one snapshot.
Result<std::vector<RunRecord>> ReadRuns(const Connection& db, Statement& select) {
  std::vector<RunRecord> runs;
  Status rows = select.ForEachRow([&](const Statement& row) -> Status {
    Result<RunRecord> run = ReadRunRow(db, row);
    if (!run) return ErrorOf(run);
    runs.push_back(std::move(*run));
    return {};
  });
  if (!rows) return ErrorOf(rows);
  for (RunRecord& run : runs) {
    if (Status read = ReadOps(db, run); !read) return ErrorOf(read);
    if (Status read = ReadMetrics(db, run); !read) return ErrorOf(read);
    if (Status read = SelectConditions(db, run); !read) return ErrorOf(read);
    CompleteMetrics(run);
  }
  return runs;
}

int64_t Limit(size_t n) {
  return static_cast<int64_t>(std::min<size_t>(n, std::numeric_limits<int64_t>::max()));
}

}  // namespace

Result<int64_t> Store::AddRun(const RunRecord& run) {
  const Connection& db = *connection_;
  Result<Transaction> transaction = Transaction::Begin(db, "adding run");
  if (!transaction) return ErrorOf(transaction);
  int64_t id = 0;
  if (Status done = InsertRun(db, run, id); !done) return ErrorOf(done);
  for (auto [op, direction] : {std::pair{"read", &run.result.read}, {"write", &run.result.write}}) {
    if (IsEmpty(*direction)) continue;
    if (Status done = InsertOp(db, id, op, *direction); !done) {
      return ErrorOf(done);
    }
  }
  if (Status done = InsertMetrics(db, id, run.metrics); !done) {
    return ErrorOf(done);
  }
  if (Status done = InsertConditions(db, id, run); !done) return ErrorOf(done);
  if (Status done = transaction->Commit(); !done) return ErrorOf(done);
  return id;
}

Result<RunRecord> Store::GetRun(int64_t id) const {
  const Connection& db = *connection_;
  Result<Transaction> snapshot = Transaction::Begin(db, "reading run", Transaction::Kind::kRead);
  if (!snapshot) return ErrorOf(snapshot);
  Result<Statement> select =
      db.Prepare(fmt::format("SELECT {} FROM runs WHERE id = ?1", kRunColumns), "reading run");
  if (!select) return ErrorOf(select);
  select->Bind(1, id);
  Result<std::vector<RunRecord>> runs = ReadRuns(db, *select);
  if (!runs) return ErrorOf(runs);
  if (runs->empty()) {
    return MakeError(ErrorCode::kNotFound, fmt::format("no run with id {}", id), db.Path());
  }
  return std::move(runs->front());
}

Result<std::vector<MetricSample>> Store::GetRunMetrics(int64_t id) const {
  RunRecord run;
  run.id = id;
  if (Status read = ReadMetrics(*connection_, run); !read) return ErrorOf(read);
  return std::move(run.metrics);
}

Result<std::vector<RunRecord>> Store::RecentRuns(std::string_view job, std::string_view fingerprint,
                                                 std::string_view device, size_t limit,
                                                 bool only_ok) const {
  const Connection& db = *connection_;
  // Only the filters in use appear in the SQL, so the series index serves
  // whichever prefix of (job, fingerprint, device) is given.
  std::string sql = fmt::format("SELECT {} FROM runs WHERE 1", kRunColumns);
  std::vector<std::string_view> values;
  for (auto [column, value] :
       {std::pair{"job", job}, {"fingerprint", fingerprint}, {"device", device}}) {
    if (value.empty()) continue;
    values.push_back(value);
    sql += fmt::format(" AND {} = ?{}", column, values.size());
  }
  if (only_ok) sql += " AND result = 'ok'";
  sql += fmt::format(" ORDER BY start_unix_ms DESC, id DESC LIMIT ?{}", values.size() + 1);

  Result<Transaction> snapshot =
      Transaction::Begin(db, "reading recent runs", Transaction::Kind::kRead);
  if (!snapshot) return ErrorOf(snapshot);
  Result<Statement> select = db.Prepare(sql, "reading recent runs");
  if (!select) return ErrorOf(select);
  int index = 1;
  for (std::string_view value : values) select->Bind(index++, value);
  select->Bind(index, Limit(limit));
  return ReadRuns(db, *select);
}

Result<std::vector<LearningCandidate>> Store::SeriesCandidates(std::string_view job,
                                                               std::string_view fingerprint,
                                                               std::string_view device) const {
  const Connection& db = *connection_;
  const std::string sql = fmt::format(
      "SELECT r.id, r.start_unix_ms, c.run_id IS NOT NULL, {} FROM runs r "
      "LEFT JOIN run_conditions c ON c.run_id = r.id "
      "WHERE r.job = ?1 AND r.fingerprint = ?2 AND r.device = ?3 AND r.result = 'ok' "
      "AND r.id > COALESCE((SELECT after_run_id FROM baseline_resets WHERE job = ?1), 0) "
      "ORDER BY r.start_unix_ms, r.id",
      internal::ConditionColumns("c."));
  Result<Transaction> snapshot =
      Transaction::Begin(db, "reading runs for a baseline", Transaction::Kind::kRead);
  if (!snapshot) return ErrorOf(snapshot);
  Result<Statement> select = db.Prepare(sql, "reading runs for a baseline");
  if (!select) return ErrorOf(select);
  select->Bind(1, job).Bind(2, fingerprint).Bind(3, device);
  std::vector<LearningCandidate> out;
  Status rows = select->ForEachRow([&](const Statement& row) -> Status {
    LearningCandidate c{row.Int(0), row.Int(1), std::nullopt};
    if (row.Int(2) != 0) c.conditions = internal::ConditionsAt(row, 3);
    out.push_back(c);
    return {};
  });
  if (!rows) return ErrorOf(rows);
  return out;
}

Result<std::vector<RunRecord>> Store::RunsForBaseline(std::string_view job,
                                                      std::string_view fingerprint,
                                                      std::string_view device, size_t n,
                                                      BaselineRuns which) const {
  const Connection& db = *connection_;
  const bool first = which == BaselineRuns::kFirst;
  const std::string sql = fmt::format(
      "SELECT {} FROM runs WHERE job = ?1 AND fingerprint = ?2 AND device = ?3 "
      "AND result = 'ok' AND id > COALESCE((SELECT after_run_id FROM baseline_resets "
      "WHERE job = ?1), 0) ORDER BY start_unix_ms {}, id {} LIMIT ?4",
      kRunColumns, first ? "ASC" : "DESC", first ? "ASC" : "DESC");
  Result<Transaction> snapshot =
      Transaction::Begin(db, "reading runs for a baseline", Transaction::Kind::kRead);
  if (!snapshot) return ErrorOf(snapshot);
  Result<Statement> select = db.Prepare(sql, "reading runs for a baseline");
  if (!select) return ErrorOf(select);
  select->Bind(1, job).Bind(2, fingerprint).Bind(3, device).Bind(4, Limit(n));
  Result<std::vector<RunRecord>> runs = ReadRuns(db, *select);
  if (runs && !first) std::reverse(runs->begin(), runs->end());
  return runs;
}

}  // namespace iowatch::probes
