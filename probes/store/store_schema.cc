#include "probes/store/store_schema.h"

#include <array>
#include <string>
#include <vector>

namespace iowatch::probes::internal {
namespace {

// Version 1. Conventions: STRICT tables (a wrong type is an error, not a
// silent conversion); units in column names; unsigned 64-bit counters are
// stored as their two's-complement int64 (SQLite has no unsigned type; real
// values stay far below 2^63); ids are AUTOINCREMENT so an id is never reused
// after pruning, and a log line naming "run 42" always means the same run.
constexpr std::string_view kSchemaV1 = R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job TEXT NOT NULL,
  fingerprint TEXT NOT NULL,            -- JobFingerprint: what a measurement depends on
  job_options TEXT NOT NULL,            -- JobOptionsText: every option, name included
  device TEXT NOT NULL,                 -- "major:minor"
  model TEXT NOT NULL,
  kernel TEXT NOT NULL,                 -- uname -r
  start_unix_ms INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  result TEXT NOT NULL CHECK (result IN ('ok', 'error')),
  error TEXT NOT NULL,                  -- why the run failed, '' when ok
  run_end TEXT NOT NULL CHECK (run_end IN ('completed', 'interrupted', 'timed_out', 'failed')),
  elapsed_ns INTEGER NOT NULL,
  fsyncs INTEGER NOT NULL,
  cpu_user_seconds REAL NOT NULL,
  cpu_system_seconds REAL NOT NULL,
  voluntary_switches INTEGER NOT NULL,
  involuntary_switches INTEGER NOT NULL,
  io_error_code INTEGER,                -- ProbeResult::error; all four NULL when none
  io_error_message TEXT,
  io_error_path TEXT,
  io_error_errno INTEGER
) STRICT;
CREATE INDEX runs_by_series ON runs (job, fingerprint, device, start_unix_ms);
CREATE INDEX runs_by_start ON runs (start_unix_ms);

-- One row per direction that did anything. Histograms: see store_codec.h.
CREATE TABLE run_ops (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  op TEXT NOT NULL CHECK (op IN ('read', 'write')),
  ios INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  short_ios INTEGER NOT NULL,
  errors INTEGER NOT NULL,
  runtime_ns INTEGER NOT NULL,
  slat_n INTEGER NOT NULL, slat_min_ns INTEGER NOT NULL, slat_max_ns INTEGER NOT NULL,
  slat_mean_ns REAL NOT NULL, slat_stddev_ns REAL NOT NULL,
  clat_n INTEGER NOT NULL, clat_min_ns INTEGER NOT NULL, clat_max_ns INTEGER NOT NULL,
  clat_mean_ns REAL NOT NULL, clat_stddev_ns REAL NOT NULL,
  lat_n INTEGER NOT NULL, lat_min_ns INTEGER NOT NULL, lat_max_ns INTEGER NOT NULL,
  lat_mean_ns REAL NOT NULL, lat_stddev_ns REAL NOT NULL,
  clat_histogram BLOB,                  -- NULL when empty
  lat_histogram BLOB,
  PRIMARY KEY (run_id, op)
) STRICT, WITHOUT ROWID;

-- The run's MetricSamples, so baselines are learned without decoding
-- histograms. value is NULL for NaN (SQLite stores no NaN). Rows are read
-- back in insertion (rowid) order.
CREATE TABLE run_metrics (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  op TEXT NOT NULL,
  metric TEXT NOT NULL,
  value REAL,
  UNIQUE (run_id, op, metric)
) STRICT;

-- At most one baseline per job, fingerprint and device. pinned: given by an
-- operator (import) rather than learned from this host's runs. run_count is
-- kept apart from baseline_runs because an imported baseline has a count but
-- no local runs.
CREATE TABLE baselines (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  device TEXT NOT NULL,
  model TEXT NOT NULL,
  created_unix_ms INTEGER NOT NULL,
  pinned INTEGER NOT NULL CHECK (pinned IN (0, 1)),
  run_count INTEGER NOT NULL,
  UNIQUE (job, fingerprint, device)
) STRICT;

CREATE TABLE baseline_metrics (
  baseline_id INTEGER NOT NULL REFERENCES baselines (id) ON DELETE CASCADE,
  op TEXT NOT NULL,
  metric TEXT NOT NULL,
  median REAL NOT NULL,
  spread REAL NOT NULL,
  UNIQUE (baseline_id, op, metric)
) STRICT;

-- No ON DELETE for run_id: deleting a run a baseline was built from is a
-- foreign-key error, a second guard behind PruneRunsBefore's own filter.
CREATE TABLE baseline_runs (
  baseline_id INTEGER NOT NULL REFERENCES baselines (id) ON DELETE CASCADE,
  run_id INTEGER NOT NULL REFERENCES runs (id),
  UNIQUE (baseline_id, run_id)
) STRICT;
CREATE INDEX baseline_runs_by_run ON baseline_runs (run_id);
)sql";

// `iowatch baseline reset`: a job learns again only from runs stored after
// its last reset (ids above the largest run id issued then: AUTOINCREMENT
// never reuses one, and ids do not move with the clock). Without it the
// learner took the first runs ever again: a replaced disk with the same
// major:minor got the old disk's baseline back.
constexpr std::string_view kSchemaV2 = R"sql(
CREATE TABLE baseline_resets (
  job TEXT PRIMARY KEY,
  after_run_id INTEGER NOT NULL
) STRICT;
)sql";

// What else the device and host did during each run (a run slowed
// by others' I/O is not a slower disk). Runs stored before have no row:
// their conditions are unknown and they are never judged on them.
constexpr std::string_view kSchemaV3 = R"sql(
CREATE TABLE run_conditions (
  run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  seconds REAL NOT NULL,                -- the span measured (the run's measured phase)
  device_ios INTEGER NOT NULL,          -- the whole disk's requests completed in it
  device_bytes INTEGER NOT NULL,
  device_busy_seconds REAL NOT NULL,    -- io_ticks
  device_io_seconds REAL NOT NULL,      -- the requests' summed times
  own_requests INTEGER NOT NULL,        -- the probe's share of those
  own_bytes INTEGER NOT NULL,
  own_io_seconds REAL NOT NULL,
  io_pressure_some REAL,                -- share of the span; NULL without PSI
  io_pressure_full REAL,
  cpu_steal REAL NOT NULL,
  other_probe INTEGER NOT NULL CHECK (other_probe IN (0, 1))
) STRICT;
)sql";

// Baselines per load band (a contended run is judged against runs that saw a
// comparable foreign load, probes/verdicts/run_class.h): band joins the key,
// so the three baseline tables are rebuilt (SQLite cannot alter a UNIQUE
// constraint). The children are copied and dropped before the parent, so the
// parent's implicit DELETE cascades into nothing, and the renames carry the
// new tables' foreign keys along, and the id sequence goes on where it was
// (ids are never reused). Learned baselines are dropped: they came from a
// job's first 5 runs whatever the load (the false alarms the replay harness
// measured on the load recording), and the daemon relearns them from clean
// runs; pinned ones (captured, imported: an operator's word) become the clean
// band's. Metrics gain the pooled quantile interval (0: unknown, as for
// imported baselines).
constexpr std::string_view kSchemaV4 = R"sql(
CREATE TABLE baselines_v4 (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  device TEXT NOT NULL,
  model TEXT NOT NULL,
  band INTEGER NOT NULL CHECK (band >= 0),  -- 0: clean runs; 1 and up: load bands
  created_unix_ms INTEGER NOT NULL,
  pinned INTEGER NOT NULL CHECK (pinned IN (0, 1)),
  run_count INTEGER NOT NULL,
  UNIQUE (job, fingerprint, device, band)
) STRICT;
INSERT INTO baselines_v4 (id, job, fingerprint, device, model, band, created_unix_ms, pinned,
                          run_count)
  SELECT id, job, fingerprint, device, model, 0, created_unix_ms, pinned, run_count
  FROM baselines WHERE pinned = 1;
DELETE FROM sqlite_sequence WHERE name = 'baselines_v4';
INSERT INTO sqlite_sequence (name, seq)
  SELECT 'baselines_v4', seq FROM sqlite_sequence WHERE name = 'baselines';

CREATE TABLE baseline_metrics_v4 (
  baseline_id INTEGER NOT NULL REFERENCES baselines_v4 (id) ON DELETE CASCADE,
  op TEXT NOT NULL,
  metric TEXT NOT NULL,
  median REAL NOT NULL,
  spread REAL NOT NULL,
  samples INTEGER NOT NULL DEFAULT 0,   -- a quantile's pooled I/Os; 0: not known
  interval_low REAL NOT NULL DEFAULT 0,
  interval_high REAL NOT NULL DEFAULT 0,
  UNIQUE (baseline_id, op, metric)
) STRICT;
INSERT INTO baseline_metrics_v4 (rowid, baseline_id, op, metric, median, spread)
  SELECT rowid, baseline_id, op, metric, median, spread FROM baseline_metrics
  WHERE baseline_id IN (SELECT id FROM baselines_v4);

CREATE TABLE baseline_runs_v4 (
  baseline_id INTEGER NOT NULL REFERENCES baselines_v4 (id) ON DELETE CASCADE,
  run_id INTEGER NOT NULL REFERENCES runs (id),
  UNIQUE (baseline_id, run_id)
) STRICT;
INSERT INTO baseline_runs_v4 (rowid, baseline_id, run_id)
  SELECT rowid, baseline_id, run_id FROM baseline_runs
  WHERE baseline_id IN (SELECT id FROM baselines_v4);

DROP INDEX baseline_runs_by_run;
DROP TABLE baseline_runs;
DROP TABLE baseline_metrics;
DROP TABLE baselines;
ALTER TABLE baselines_v4 RENAME TO baselines;
ALTER TABLE baseline_metrics_v4 RENAME TO baseline_metrics;
ALTER TABLE baseline_runs_v4 RENAME TO baseline_runs;
CREATE INDEX baseline_runs_by_run ON baseline_runs (run_id);

-- The share of the run the probe's thread waited for a CPU (NULL without
-- schedstat, and for runs stored before).
ALTER TABLE run_conditions ADD COLUMN cpu_wait REAL;
)sql";

// The disk's load in a short window just before each run, the probe not yet
// there (RunConditions::before): all four NULL when not measured (runs
// stored before, or probes.baseline.contention.before set to 0).
constexpr std::string_view kSchemaV5 = R"sql(
ALTER TABLE run_conditions ADD COLUMN before_seconds REAL;
ALTER TABLE run_conditions ADD COLUMN before_device_ios INTEGER;
ALTER TABLE run_conditions ADD COLUMN before_device_bytes INTEGER;
ALTER TABLE run_conditions ADD COLUMN before_device_busy_seconds REAL;
)sql";

// Device characterisation sweeps (`iowatch sweep`): the report as its JSON
// (probes/sweep/sweep_report.h), with the device's name and identity beside
// it for listing and comparing.
constexpr std::string_view kSchemaV6 = R"sql(
CREATE TABLE sweeps (
  id INTEGER PRIMARY KEY,
  started_unix_ms INTEGER NOT NULL,
  device TEXT NOT NULL,
  identity TEXT NOT NULL,
  target TEXT NOT NULL,
  report_json TEXT NOT NULL
);
)sql";

// What each probe series' verdicts remember between runs (SeriesState: the
// hysteresis streaks, standing regressions and suspect spans), so that a
// restart neither forgets a regression nor learns from a suspect span. The
// state is as of run through_run_id: runs stored after it (a kill between
// storing a run and its state) are judged again at the next start.
constexpr std::string_view kSchemaV7 = R"sql(
CREATE TABLE series_states (
  job TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  device TEXT NOT NULL,
  through_run_id INTEGER NOT NULL,
  state_json TEXT NOT NULL,
  PRIMARY KEY (job, fingerprint, device)
);
)sql";

// Whether each successful run was judged against a baseline and, if not,
// why (probes::NotJudged's words), so that the share of runs judged and the
// last judged run survive a restart. Runs stored before have no row.
constexpr std::string_view kSchemaV8 = R"sql(
CREATE TABLE run_verdicts (
  run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  judged INTEGER NOT NULL CHECK (judged IN (0, 1)),
  reason TEXT NOT NULL
) STRICT;
)sql";

// A series_states row that could not be read (its JSON malformed), moved
// here whole at the daemon's start with when and why, so that it is left out
// of every later start without being lost to the operator.
constexpr std::string_view kSchemaV9 = R"sql(
CREATE TABLE series_states_quarantine (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  device TEXT NOT NULL,
  through_run_id INTEGER NOT NULL,
  state_json TEXT NOT NULL,
  quarantined_unix_ms INTEGER NOT NULL,
  reason TEXT NOT NULL
) STRICT;
)sql";

// The passive judge (probes/verdicts/passive/): each series' verdict state
// as JSON (the hysteresis, the bad windows of an undecided streak, the last
// judged window's figures), the identity of the disk it belongs to (a disk
// that took the name later starts afresh), and its windows with what became
// of them; the learned ones are what a restart refits the model from. The
// state is as of window through_unix_ms and is written in one transaction
// with the windows up to it. passive_resets: when `iowatch baseline
// passive-reset` last told a running daemon to forget a disk.
constexpr std::string_view kSchemaV10 = R"sql(
CREATE TABLE passive_states (
  device TEXT NOT NULL,
  op TEXT NOT NULL,
  size TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('device', 'diskstats')),
  identity TEXT NOT NULL,
  through_unix_ms INTEGER NOT NULL,
  state_json TEXT NOT NULL,
  PRIMARY KEY (device, op, size, source)
) STRICT;
CREATE TABLE passive_states_quarantine (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  device TEXT NOT NULL,
  op TEXT NOT NULL,
  size TEXT NOT NULL,
  source TEXT NOT NULL,
  identity TEXT NOT NULL,
  through_unix_ms INTEGER NOT NULL,
  state_json TEXT NOT NULL,
  quarantined_unix_ms INTEGER NOT NULL,
  reason TEXT NOT NULL
) STRICT;
CREATE TABLE passive_windows (
  device TEXT NOT NULL,
  op TEXT NOT NULL,
  size TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('device', 'diskstats')),
  start_unix_ms INTEGER NOT NULL,
  end_unix_ms INTEGER NOT NULL,
  requests INTEGER NOT NULL,
  mean_seconds REAL NOT NULL,
  rate REAL NOT NULL,
  other_bytes_rate REAL NOT NULL,
  mean_bytes REAL NOT NULL,
  steal REAL NOT NULL,
  queue_depth REAL NOT NULL,
  utilization REAL NOT NULL,
  probe INTEGER NOT NULL CHECK (probe IN (0, 1)),
  counters_reset INTEGER NOT NULL CHECK (counters_reset IN (0, 1)),
  reason TEXT NOT NULL,
  predicted_seconds REAL NOT NULL,
  bound_ratio REAL NOT NULL,
  bad INTEGER NOT NULL CHECK (bad IN (0, 1)),
  learned INTEGER NOT NULL CHECK (learned IN (0, 1)),
  PRIMARY KEY (device, op, size, source, end_unix_ms)
) STRICT, WITHOUT ROWID;
CREATE TABLE passive_resets (
  device TEXT PRIMARY KEY,
  unix_ms INTEGER NOT NULL
) STRICT;
)sql";

// v11: the windows a passive series' drift watch chose as its first day's
// reference (passive_drift.h), kept whatever their age.
constexpr std::string_view kSchemaV11 = R"sql(
ALTER TABLE passive_windows ADD COLUMN reference INTEGER NOT NULL DEFAULT 0
  CHECK (reference IN (0, 1));
)sql";

constexpr std::array kMigrations{
    Migration{1, kSchemaV1},   Migration{2, kSchemaV2},   Migration{3, kSchemaV3},
    Migration{4, kSchemaV4},   Migration{5, kSchemaV5},   Migration{6, kSchemaV6},
    Migration{7, kSchemaV7},   Migration{8, kSchemaV8},   Migration{9, kSchemaV9},
    Migration{10, kSchemaV10}, Migration{11, kSchemaV11},
};

Result<int> UserVersion(const Connection& connection) {
  Result<int64_t> version =
      connection.QueryInt("PRAGMA user_version", "reading the schema version");
  if (!version) return ErrorOf(version);
  return static_cast<int>(*version);
}

std::unexpected<Error> TooNew(const Connection& connection, int found, int known) {
  return MakeError(ErrorCode::kUnsupported,
                   fmt::format("schema version {} is newer than this iowatch understands "
                               "(up to {}); run a newer iowatch or use another state directory",
                               found, known),
                   connection.Path());
}

int KnownVersion(std::span<const Migration> migrations) {
  return migrations.empty() ? 0 : migrations.back().version;
}

Result<std::vector<std::string>> TableNames(const Connection& connection) {
  Result<Statement> select = connection.Prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
      "ORDER BY name",
      "listing the tables");
  if (!select) return ErrorOf(select);
  std::vector<std::string> names;
  Status read = select->ForEachRow([&](const Statement& row) -> Status {
    names.push_back(row.Text(0));
    return {};
  });
  if (!read) return ErrorOf(read);
  return names;
}

}  // namespace

std::span<const Migration> StoreMigrations() { return kMigrations; }

Status CheckOwnSchema(const Connection& connection, std::span<const Migration> migrations) {
  Result<int> version = UserVersion(connection);
  if (!version) return ErrorOf(version);
  if (*version > KnownVersion(migrations)) {
    return TooNew(connection, *version, KnownVersion(migrations));
  }
  if (*version > 0) return {};
  Result<std::vector<std::string>> tables = TableNames(connection);
  if (!tables) return ErrorOf(tables);
  if (tables->empty()) return {};
  constexpr size_t kNamed = 5;
  std::string names;
  for (size_t i = 0; i < tables->size() && i < kNamed; ++i) {
    names += fmt::format("{}{}", i == 0 ? "" : ", ", (*tables)[i]);
  }
  if (tables->size() > kNamed) names += fmt::format(" and {} more", tables->size() - kNamed);
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("not an iowatch store: it holds tables ({}) but no iowatch schema; "
                               "left untouched",
                               names),
                   connection.Path());
}

Status CheckCurrentSchema(const Connection& connection, std::span<const Migration> migrations) {
  if (Status own = CheckOwnSchema(connection, migrations); !own) return own;
  Result<int> version = UserVersion(connection);
  if (!version) return ErrorOf(version);
  const int known = KnownVersion(migrations);
  if (*version == known) return {};
  if (*version == 0) {
    return MakeError(ErrorCode::kNotFound, "holds no iowatch data yet", connection.Path());
  }
  return MakeError(ErrorCode::kUnsupported,
                   fmt::format("schema version {} predates this iowatch's {}; `iowatch serve` or "
                               "a command that writes (capture, reset, import) migrates it",
                               *version, known),
                   connection.Path());
}

Status Migrate(const Connection& connection, std::span<const Migration> migrations) {
  const int known = migrations.empty() ? 0 : migrations.back().version;
  Result<int> current = UserVersion(connection);
  if (!current) return ErrorOf(current);
  if (*current > known) return TooNew(connection, *current, known);
  for (const Migration& migration : migrations) {
    if (migration.version <= *current) continue;
    const std::string what = fmt::format("migrating the schema to version {}", migration.version);
    Result<Transaction> transaction = Transaction::Begin(connection, what);
    if (!transaction) return ErrorOf(transaction);
    // Another process may have migrated between our read and our lock.
    current = UserVersion(connection);
    if (!current) return ErrorOf(current);
    if (*current > known) return TooNew(connection, *current, known);
    if (migration.version <= *current) continue;
    Status applied = connection.Exec(migration.sql, what);
    if (!applied) return applied;
    // PRAGMA takes no parameters; the version is our own integer.
    applied = connection.Exec(fmt::format("PRAGMA user_version = {}", migration.version), what);
    if (!applied) return applied;
    Status committed = transaction->Commit();
    if (!committed) return committed;
    *current = migration.version;
  }
  return {};
}

}  // namespace iowatch::probes::internal
