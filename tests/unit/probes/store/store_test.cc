// Store: opening (file mode, WAL, migrations, versions) and runs (exact round
// trips, ordering and filters, atomicity).
#include "probes/store/store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "probes/store/store_schema.h"
#include "probes/store/store_sqlite.h"
#include "tests/unit/probes/store/store_test_util.h"

namespace iowatch::probes {
namespace {

using test_store::Exec;
using test_store::QueryInt;
using test_store::SampleRun;
using test_store::ScratchDir;
using test_store::SeriesRun;

// A second connection, to look at the file as another process would.
TEST(StoreOpen, CreatesThePrivateFileInWalModeAtTheLatestVersion) {
  ScratchDir dir;
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store) << store.error().ToString();
  EXPECT_EQ(store->Path(), dir.Db().string());
  struct stat info {};
  ASSERT_EQ(::stat(dir.Db().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_EQ(QueryInt(dir.Db(), "PRAGMA user_version"), internal::StoreMigrations().back().version);
  EXPECT_EQ(QueryInt(dir.Db(),
                     "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name "
                     "IN ('runs', 'run_ops', 'run_metrics', 'baselines', "
                     "'baseline_metrics', 'baseline_runs')"),
            6);
  Result<internal::Connection> raw = internal::Connection::Open(dir.Db().string());
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->QueryText("PRAGMA journal_mode", "test").value_or(""), "wal");
}

TEST(StoreOpen, ReopeningKeepsDataAndVersion) {
  ScratchDir dir;
  int64_t id = 0;
  {
    Result<Store> store = Store::Open(dir.Db());
    ASSERT_TRUE(store) << store.error().ToString();
    Result<int64_t> added = store->AddRun(SampleRun(1));
    ASSERT_TRUE(added) << added.error().ToString();
    id = *added;
  }
  for (int i = 0; i < 2; ++i) {
    Result<Store> store = Store::Open(dir.Db());
    ASSERT_TRUE(store) << store.error().ToString();
    EXPECT_TRUE(store->GetRun(id));
  }
  EXPECT_EQ(QueryInt(dir.Db(), "PRAGMA user_version"), internal::StoreMigrations().back().version);
  EXPECT_EQ(QueryInt(dir.Db(), "SELECT count(*) FROM runs"), 1);
}

TEST(StoreOpen, TwoStoresOnOneFileSeeEachOthersWrites) {
  ScratchDir dir;
  Result<Store> daemon = Store::Open(dir.Db());
  Result<Store> cli = Store::Open(dir.Db());
  ASSERT_TRUE(daemon && cli);
  Result<int64_t> id = daemon->AddRun(SampleRun(2));
  ASSERT_TRUE(id);
  EXPECT_TRUE(cli->GetRun(*id));
  EXPECT_TRUE(cli->AddRun(SampleRun(3)));
}

TEST(StoreOpen, MissingDirectoryIsAnErrorAndIsNotCreated) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Path() / "absent" / "iowatch.db");
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store.error().ToString(),
            (dir.Path() / "absent").string() +
                ": cannot use the state directory: No such file or directory");
  EXPECT_FALSE(std::filesystem::exists(dir.Path() / "absent"));
}

TEST(StoreOpen, NewerSchemaIsRefused) {
  ScratchDir dir;
  ASSERT_TRUE(Store::Open(dir.Db()));
  Exec(dir.Db(), "PRAGMA user_version = 99");
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(store.error().ToString(),
            dir.Db().string() +
                fmt::format(": schema version 99 is newer than this iowatch understands (up to "
                            "{}); run a newer iowatch or use another state directory",
                            internal::StoreMigrations().back().version));
  EXPECT_EQ(QueryInt(dir.Db(), "PRAGMA user_version"), 99);  // untouched
}

TEST(StoreOpen, AFileThatIsNotADatabaseIsRefused) {
  ScratchDir dir;
  std::ofstream(dir.Db()) << "this is not a database, it is a text file of some length\n";
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_FALSE(store);
  EXPECT_NE(store.error().ToString().find("file is not a database (SQLITE_NOTADB)"),
            std::string::npos)
      << store.error().ToString();
}

// Adversarial test: `baseline list` on a foreign SQLite file added
// iowatch's tables and switched it to WAL.
TEST(StoreOpen, AnotherProgramsDatabaseIsRefusedUntouched) {
  ScratchDir dir;
  std::ofstream(dir.Db()).close();  // another program's new database
  Exec(dir.Db(), "CREATE TABLE accounts (id INTEGER); CREATE TABLE orders (id INTEGER)");
  const auto bytes = [&] { return std::filesystem::file_size(dir.Db()); };
  const auto before = bytes();
  for (const bool read_only : {false, true}) {
    const Result<Store> store = read_only ? Store::OpenReadOnly(dir.Db()) : Store::Open(dir.Db());
    ASSERT_FALSE(store);
    EXPECT_EQ(store.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(store.error().ToString(),
              dir.Db().string() +
                  ": not an iowatch store: it holds tables (accounts, orders) but no iowatch "
                  "schema; left untouched");
  }
  EXPECT_EQ(bytes(), before);
  EXPECT_EQ(QueryInt(dir.Db(), "SELECT count(*) FROM sqlite_master"), 2);
  Result<internal::Connection> raw = internal::Connection::Open(dir.Db().string());
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->QueryText("PRAGMA journal_mode", "test").value_or(""), "delete");
}

// Read-only commands need no write access and never migrate.
TEST(StoreOpen, ReadOnlyOpensWriteNothing) {
  ScratchDir dir;
  {
    Result<Store> store = Store::Open(dir.Db());
    ASSERT_TRUE(store && store->AddRun(SampleRun(1)));
  }
  ASSERT_EQ(::chmod(dir.Db().c_str(), 0400), 0);
  ASSERT_EQ(::chmod(dir.Path().c_str(), 0500), 0);
  Result<Store> reader = Store::OpenReadOnly(dir.Db());
  ASSERT_TRUE(reader) << reader.error().ToString();
  EXPECT_EQ(reader->RecentRuns("", "", "", 10)->size(), 1u);
  EXPECT_FALSE(reader->AddRun(SampleRun(2)));
  ::chmod(dir.Path().c_str(), 0700);
  ::chmod(dir.Db().c_str(), 0600);

  Exec(dir.Db(), "PRAGMA user_version = 99");
  EXPECT_EQ(Store::OpenReadOnly(dir.Db()).error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(Store::OpenReadOnly(dir.Path() / "absent.db").error().code, ErrorCode::kNotFound);
  std::ofstream(dir.Path() / "empty.db").close();
  const auto empty = Store::OpenReadOnly(dir.Path() / "empty.db");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().ToString(),
            (dir.Path() / "empty.db").string() + ": holds no iowatch data yet");
  EXPECT_EQ(std::filesystem::file_size(dir.Path() / "empty.db"), 0u);
}

// SIGKILL in the middle of a migration (a slow one: 20 million rows, so
// the kill lands inside its transaction with pages already spilled to the
// file): the next open rolls the hot journal back, the version and schema
// are the previous ones, and the migration then runs to the end.
TEST(StoreMigrate, AKillInsideAMigrationLeavesThePreviousVersionAndTheNextRunMigrates) {
  ScratchDir dir;
  std::ofstream(dir.Db()).close();
  const internal::Migration v1[] = {{1, "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (7)"}};
  {
    Result<internal::Connection> db = internal::Connection::Open(dir.Db().string());
    ASSERT_TRUE(db && internal::Migrate(*db, v1));
  }
  const internal::Migration slow[] = {
      v1[0],
      {2,
       "CREATE TABLE b (y INTEGER); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
       "FROM c WHERE i < 20000000) INSERT INTO b SELECT i FROM c"}};
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Result<internal::Connection> db = internal::Connection::Open(dir.Db().string());
    ::_exit(db && internal::Migrate(*db, slow) ? 0 : 1);
  }
  // Wait until the transaction has written to its rollback journal.
  const std::filesystem::path journal = dir.Db().string() + "-journal";
  std::error_code ec;
  bool inside = false;
  for (int i = 0; i < 2000 && !inside; ++i) {
    inside = std::filesystem::file_size(journal, ec) > 0 && !ec &&
             std::filesystem::file_size(dir.Db(), ec) > 64 * 1024;
    if (!inside) ::usleep(5000);
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(inside) << "the migration never got under way";
  ASSERT_TRUE(WIFSIGNALED(status)) << "the migration finished before the kill";

  Result<internal::Connection> db = internal::Connection::Open(dir.Db().string());
  ASSERT_TRUE(db) << db.error().ToString();
  EXPECT_EQ(*db->QueryText("PRAGMA integrity_check", "test"), "ok");
  EXPECT_EQ(*db->QueryInt("PRAGMA user_version", "test"), 1);
  EXPECT_EQ(*db->QueryInt("SELECT count(*) FROM sqlite_schema WHERE name = 'b'", "test"), 0);
  EXPECT_EQ(*db->QueryInt("SELECT x FROM a", "test"), 7);
  const internal::Migration fast[] = {v1[0], {2, "CREATE TABLE b (y INTEGER)"}};
  ASSERT_TRUE(internal::Migrate(*db, fast));
  EXPECT_EQ(*db->QueryInt("PRAGMA user_version", "test"), 2);
}

TEST(StoreMigrate, AppliesInOrderAndAFailingMigrationLeavesThePreviousVersion) {
  ScratchDir dir;
  std::ofstream(dir.Db()).close();
  Result<internal::Connection> db = internal::Connection::Open(dir.Db().string());
  ASSERT_TRUE(db) << db.error().ToString();
  const internal::Migration first[] = {{1, "CREATE TABLE a (x INTEGER)"},
                                       {2, "CREATE TABLE b (x INTEGER)"}};
  ASSERT_TRUE(internal::Migrate(*db, first));
  ASSERT_TRUE(internal::Migrate(*db, first));  // idempotent
  EXPECT_EQ(*db->QueryInt("PRAGMA user_version", "test"), 2);

  const internal::Migration broken[] = {{1, "CREATE TABLE a (x INTEGER)"},
                                        {2, "CREATE TABLE b (x INTEGER)"},
                                        {3,
                                         "CREATE TABLE c (x INTEGER); INSERT INTO nowhere "
                                         "VALUES (1)"}};
  Status migrated = internal::Migrate(*db, broken);
  ASSERT_FALSE(migrated);
  EXPECT_EQ(migrated.error().ToString(),
            dir.Db().string() +
                ": migrating the schema to version 3: no such table: nowhere (SQLITE_ERROR)");
  EXPECT_EQ(*db->QueryInt("PRAGMA user_version", "test"), 2);
  EXPECT_EQ(*db->QueryInt("SELECT count(*) FROM sqlite_schema WHERE name = 'c'", "test"), 0);

  const internal::Migration older[] = {{1, "CREATE TABLE a (x INTEGER)"}};
  Status refused = internal::Migrate(*db, older);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUnsupported);
}

TEST(StoreRuns, RoundTripIsExact) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store);
  RunRecord run = SampleRun(42);
  // A NaN (SQLite stores none) goes last.
  std::erase_if(run.metrics, [](const MetricSample& m) {
    return m.op == "read" && m.metric == "slat_mean_seconds";
  });
  run.metrics.push_back({"read", "slat_mean_seconds", std::numeric_limits<double>::quiet_NaN()});
  Result<int64_t> id = store->AddRun(run);
  ASSERT_TRUE(id) << id.error().ToString();
  Result<RunRecord> got = store->GetRun(*id);
  ASSERT_TRUE(got) << got.error().ToString();

  EXPECT_EQ(got->id, *id);
  EXPECT_EQ(got->job, run.job);
  EXPECT_EQ(got->fingerprint, JobFingerprint(run.result.spec));  // filled in from the spec
  EXPECT_EQ(got->device, run.device);
  EXPECT_EQ(got->model, run.model);
  EXPECT_EQ(got->kernel, run.kernel);
  EXPECT_EQ(got->start_unix_ms, run.start_unix_ms);
  EXPECT_EQ(got->duration_ms, run.duration_ms);
  EXPECT_EQ(got->ok, run.ok);
  EXPECT_EQ(got->error, run.error);
  const ProbeResult& r = got->result;
  EXPECT_EQ(r.spec, run.result.spec);
  test_store::ExpectSameDirection(r.read, run.result.read);
  test_store::ExpectSameDirection(r.write, run.result.write);
  EXPECT_EQ(r.fsyncs, run.result.fsyncs);
  EXPECT_EQ(r.cpu.user_seconds, run.result.cpu.user_seconds);
  EXPECT_EQ(r.cpu.system_seconds, run.result.cpu.system_seconds);
  EXPECT_EQ(r.cpu.ContextSwitches(), run.result.cpu.ContextSwitches());
  EXPECT_EQ(r.cpu.voluntary_switches, run.result.cpu.voluntary_switches);
  EXPECT_EQ(r.elapsed, run.result.elapsed);
  EXPECT_EQ(r.end, run.result.end);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->code, run.result.error->code);
  EXPECT_EQ(r.error->ToString(), run.result.error->ToString());
  EXPECT_EQ(r.error->os_errno, run.result.error->os_errno);

  ASSERT_EQ(got->metrics.size(), run.metrics.size());
  for (size_t i = 0; i + 1 < run.metrics.size(); ++i) EXPECT_EQ(got->metrics[i], run.metrics[i]);
  EXPECT_TRUE(std::isnan(got->metrics.back().value));

  // What is stored is compact: a few hundred bytes per histogram, not 16 KiB.
  EXPECT_LT(QueryInt(dir.Db(), "SELECT max(length(clat_histogram)) FROM run_ops"), 1024);
}

RunConditions SampleConditions() {
  RunConditions c;
  c.seconds = 2.0015;
  c.device_ios = 21'345;
  c.device_bytes = 87'654'321;
  c.device_busy_seconds = 1.25;
  c.device_io_seconds = 3.5;
  c.own_requests = 20'000;
  c.own_bytes = 81'920'000;
  c.own_io_seconds = 3.125;
  c.io_pressure_some = 0.125;
  c.cpu_steal = 0.01;
  c.other_probe = true;
  c.cpu_wait = 0.0625;
  c.before = LoadWindow{1.0005, 2'345, 38'420'480, 0.3125};
  return c;
}

TEST(StoreRuns, ConditionsRoundTripExactlyAndARunWithoutThemReadsUnknown) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store);
  RunRecord measured = SampleRun(1);
  measured.conditions = SampleConditions();
  const RunRecord unmeasured = SampleRun(2);
  const auto a = store->AddRun(measured);
  const auto b = store->AddRun(unmeasured);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(store->GetRun(*a)->conditions, measured.conditions);
  EXPECT_EQ(store->GetRun(*b)->conditions, std::nullopt);
  EXPECT_EQ(QueryInt(dir.Db(), "SELECT count(*) FROM run_conditions"), 1);
}

// A store from before the load window existed (schema v4) is migrated: its
// runs keep their conditions, with no window; new runs store theirs.
TEST(StoreMigrate, AVersion4StoreKeepsItsConditionsWithoutALoadWindow) {
  ScratchDir dir;
  int64_t id = 0;
  RunConditions old = SampleConditions();
  old.before.reset();
  {
    Result<Store> store = Store::Open(dir.Db());
    ASSERT_TRUE(store);
    RunRecord run = SampleRun(7);
    run.conditions = old;
    id = store->AddRun(run).value_or(0);
    ASSERT_GT(id, 0);
  }
  Exec(dir.Db(),
       "ALTER TABLE run_conditions DROP COLUMN before_seconds; "
       "ALTER TABLE run_conditions DROP COLUMN before_device_ios; "
       "ALTER TABLE run_conditions DROP COLUMN before_device_bytes; "
       "ALTER TABLE run_conditions DROP COLUMN before_device_busy_seconds; "
       "DROP TABLE sweeps; DROP TABLE series_states; DROP TABLE run_verdicts; DROP TABLE "
       "series_states_quarantine; " +
           std::string(test_store::kDropPassiveTables) + "PRAGMA user_version = 4");
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store) << store.error().ToString();
  EXPECT_EQ(QueryInt(dir.Db(), "PRAGMA user_version"), internal::StoreMigrations().back().version);
  EXPECT_EQ(store->GetRun(id)->conditions, old);
  RunRecord next = SampleRun(8);
  next.conditions = SampleConditions();
  const auto added = store->AddRun(next);
  ASSERT_TRUE(added);
  EXPECT_EQ(store->GetRun(*added)->conditions, next.conditions);
}

// A store from before the conditions existed (schema v2) is migrated; its
// runs are kept, their conditions unknown.
TEST(StoreMigrate, AVersion2StoreKeepsItsRunsWithConditionsUnknown) {
  ScratchDir dir;
  int64_t id = 0;
  {
    Result<Store> store = Store::Open(dir.Db());
    ASSERT_TRUE(store);
    id = store->AddRun(SampleRun(7)).value_or(0);
    ASSERT_GT(id, 0);
  }
  Exec(dir.Db(),
       "DROP TABLE sweeps; DROP TABLE series_states; DROP TABLE run_verdicts; DROP TABLE "
       "series_states_quarantine; " +
           std::string(test_store::kDropPassiveTables) +
           "DROP TABLE run_conditions; PRAGMA user_version = 2");
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store) << store.error().ToString();
  EXPECT_EQ(QueryInt(dir.Db(), "PRAGMA user_version"), internal::StoreMigrations().back().version);
  Result<RunRecord> run = store->GetRun(id);
  ASSERT_TRUE(run) << run.error().ToString();
  EXPECT_EQ(run->job, SampleRun(7).job);
  EXPECT_EQ(run->conditions, std::nullopt);
  RunRecord next = SampleRun(8);
  next.conditions = SampleConditions();
  const auto added = store->AddRun(next);
  ASSERT_TRUE(added);
  EXPECT_EQ(store->GetRun(*added)->conditions, next.conditions);
}

TEST(StoreRuns, ADirectionThatDidNothingHasNoRowAndComesBackEmpty) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store);
  RunRecord run = SampleRun(7);
  run.result.write = DirectionStats{};
  run.result.error.reset();
  Result<int64_t> id = store->AddRun(run);
  ASSERT_TRUE(id);
  EXPECT_EQ(QueryInt(dir.Db(), "SELECT count(*) FROM run_ops"), 1);
  Result<RunRecord> got = store->GetRun(*id);
  ASSERT_TRUE(got);
  test_store::ExpectSameDirection(got->result.write, DirectionStats{});
  test_store::ExpectSameDirection(got->result.read, run.result.read);
  EXPECT_FALSE(got->result.error.has_value());
}

// A stored histogram that no longer decodes loses that histogram, not the
// run, nor the other runs read with it.
TEST(StoreRuns, ADamagedHistogramIsReportedAndTheRestOfTheRunKept) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store);
  const RunRecord run = SampleRun(11);
  Result<int64_t> id = store->AddRun(run);
  ASSERT_TRUE(id) << id.error().ToString();
  ASSERT_TRUE(store->AddRun(SampleRun(12)));
  Exec(dir.Db(), fmt::format("UPDATE run_ops SET clat_histogram = x'ffffffff0102' "
                             "WHERE op = 'read' AND run_id = {}",
                             *id));
  Result<RunRecord> got = store->GetRun(*id);
  ASSERT_TRUE(got) << got.error().ToString();
  ASSERT_EQ(got->damage.size(), 1u);
  EXPECT_TRUE(got->damage[0].starts_with("read clat histogram: ")) << got->damage[0];
  EXPECT_EQ(got->result.read.clat_histogram.Count(), 0u);
  EXPECT_EQ(got->result.read.lat_histogram.Count(), run.result.read.lat_histogram.Count());
  EXPECT_EQ(got->result.read.ios, run.result.read.ios);
  test_store::ExpectSameDirection(got->result.write, run.result.write);
  EXPECT_EQ(got->metrics, run.metrics);  // stored: the percentiles too
  Result<std::vector<RunRecord>> recent = store->RecentRuns(run.job, "", "", 10, false);
  ASSERT_TRUE(recent) << recent.error().ToString();
  ASSERT_EQ(recent->size(), 2u);
  EXPECT_TRUE(std::ranges::any_of(*recent, [](const RunRecord& r) { return r.damage.empty(); }));
}

TEST(StoreRuns, MissingRunIsNotFound) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store);
  Result<RunRecord> got = store->GetRun(12345);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(got.error().ToString(), dir.Db().string() + ": no run with id 12345");
}

TEST(StoreRuns, AFailedAddLeavesNothingAndTheStoreUsable) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store);
  RunRecord run = SampleRun(9);
  run.metrics.push_back(run.metrics.front());  // the same (op, metric) twice
  Result<int64_t> id = store->AddRun(run);
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(id.error().ToString().find("adding run metrics: UNIQUE constraint failed"),
            std::string::npos)
      << id.error().ToString();
  for (const char* table : {"runs", "run_ops", "run_metrics"}) {
    EXPECT_EQ(QueryInt(dir.Db(), fmt::format("SELECT count(*) FROM {}", table)), 0) << table;
  }
  EXPECT_TRUE(store->AddRun(SampleRun(10)));
}

TEST(StoreRuns, RecentRunsAreNewestFirstAndFiltered) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store);
  // Inserted out of time order; two runs share a start time (id breaks the tie).
  for (auto [job, device, start, ok] : {std::tuple{"a", "8:0", 3000, true},
                                        {"a", "8:0", 1000, true},
                                        {"a", "8:0", 2000, false},
                                        {"b", "8:0", 2500, true},
                                        {"a", "8:16", 4000, true},
                                        {"a", "8:0", 3000, true}}) {
    ASSERT_TRUE(store->AddRun(SeriesRun(job, device, start, ok)));
  }
  const auto starts = [](const std::vector<RunRecord>& runs) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const RunRecord& r : runs) out.emplace_back(r.start_unix_ms, r.id);
    return out;
  };
  const std::string fp = JobFingerprint(test_store::SampleSpec());
  Result<std::vector<RunRecord>> all = store->RecentRuns("", "", "", 100);
  ASSERT_TRUE(all);
  EXPECT_EQ(starts(*all), (std::vector<std::pair<int64_t, int64_t>>{
                              {4000, 5}, {3000, 6}, {3000, 1}, {2500, 4}, {2000, 3}, {1000, 2}}));
  Result<std::vector<RunRecord>> a = store->RecentRuns("a", fp, "8:0", 10);
  ASSERT_TRUE(a);
  EXPECT_EQ(starts(*a),
            (std::vector<std::pair<int64_t, int64_t>>{{3000, 6}, {3000, 1}, {2000, 3}, {1000, 2}}));
  Result<std::vector<RunRecord>> ok = store->RecentRuns("a", "", "8:0", 10, true);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->size(), 3u);
  Result<std::vector<RunRecord>> limited = store->RecentRuns("a", "", "", 2);
  ASSERT_TRUE(limited);
  EXPECT_EQ(starts(*limited), (std::vector<std::pair<int64_t, int64_t>>{{4000, 5}, {3000, 6}}));
  Result<std::vector<RunRecord>> other_fp = store->RecentRuns("a", "rw=read", "", 10);
  ASSERT_TRUE(other_fp);
  EXPECT_TRUE(other_fp->empty());
  // Complete records, not just the row.
  EXPECT_EQ(a->front().result.read.clat_histogram.Count(), a->front().result.read.ios);
  EXPECT_FALSE(a->front().metrics.empty());
}

TEST(StoreRuns, RunsForBaselineTakeTheFirstOrLastOkRunsOldestFirst) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store);
  for (int64_t start = 1000; start <= 9000; start += 1000) {
    ASSERT_TRUE(store->AddRun(SeriesRun("a", "8:0", start, start != 2000 && start != 8000)));
  }
  ASSERT_TRUE(store->AddRun(SeriesRun("a", "8:16", 500)));  // another device
  const std::string fp = JobFingerprint(test_store::SampleSpec());
  const auto starts = [](const std::vector<RunRecord>& runs) {
    std::vector<int64_t> out;
    for (const RunRecord& r : runs) out.push_back(r.start_unix_ms);
    return out;
  };
  Result<std::vector<RunRecord>> first =
      store->RunsForBaseline("a", fp, "8:0", 3, BaselineRuns::kFirst);
  ASSERT_TRUE(first);
  EXPECT_EQ(starts(*first), (std::vector<int64_t>{1000, 3000, 4000}));
  Result<std::vector<RunRecord>> last =
      store->RunsForBaseline("a", fp, "8:0", 3, BaselineRuns::kLast);
  ASSERT_TRUE(last);
  EXPECT_EQ(starts(*last), (std::vector<int64_t>{6000, 7000, 9000}));
  Result<std::vector<RunRecord>> few =
      store->RunsForBaseline("a", fp, "8:16", 5, BaselineRuns::kFirst);
  ASSERT_TRUE(few);
  EXPECT_EQ(starts(*few), (std::vector<int64_t>{500}));
}

// A store of schema v3 (one baseline per job, fingerprint and device) is
// migrated to v4: a pinned baseline becomes the clean band's, with its
// metrics, runs and id; a learned one (from a job's first runs, whatever the
// load) is dropped, to be relearned from clean runs; ids are never reused;
// bands can then be added beside it.
TEST(StoreMigrate, AVersion3StoreKeepsItsPinnedBaselineAsTheCleanBands) {
  ScratchDir dir;
  {
    std::ofstream create(dir.Db());  // an empty file is an empty database
  }
  {
    Result<internal::Connection> db = internal::Connection::Open(dir.Db().string());
    ASSERT_TRUE(db) << db.error().ToString();
    ASSERT_TRUE(internal::Migrate(*db, internal::StoreMigrations().first(3)));
    ASSERT_TRUE(db->Exec(
        "INSERT INTO runs (id, job, fingerprint, job_options, device, model, kernel, "
        "start_unix_ms, duration_ms, result, error, run_end, elapsed_ns, fsyncs, "
        "cpu_user_seconds, cpu_system_seconds, voluntary_switches, involuntary_switches) "
        "VALUES (5, 'j', 'fp', 'name=j', '8:0', 'm', 'k', 1000, 10, 'ok', '', 'completed', "
        "10, 0, 0, 0, 0, 0);"
        "INSERT INTO run_conditions (run_id, seconds, device_ios, device_bytes, "
        "device_busy_seconds, device_io_seconds, own_requests, own_bytes, own_io_seconds, "
        "cpu_steal, other_probe) VALUES (5, 2, 10, 40960, 0.1, 0.1, 10, 40960, 0.1, 0, 0);"
        "INSERT INTO baselines (id, job, fingerprint, device, model, created_unix_ms, pinned, "
        "run_count) VALUES (3, 'j', 'fp', '8:0', 'm', 2000, 1, 1);"
        "INSERT INTO baseline_metrics VALUES (3, 'read', 'iops', 1000, 10);"
        "INSERT INTO baseline_runs VALUES (3, 5);"
        "INSERT INTO baselines (id, job, fingerprint, device, model, created_unix_ms, pinned, "
        "run_count) VALUES (7, 'learned', 'fp', '8:0', 'm', 2000, 0, 1);"
        "INSERT INTO baseline_metrics VALUES (7, 'read', 'iops', 900, 10);"
        "INSERT INTO baseline_runs VALUES (7, 5);",
        "test"));
  }
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store) << store.error().ToString();
  EXPECT_EQ(QueryInt(dir.Db(), "PRAGMA user_version"), internal::StoreMigrations().back().version);
  EXPECT_EQ(QueryInt(dir.Db(), "SELECT count(*) FROM pragma_foreign_key_check"), 0);
  EXPECT_EQ(QueryInt(dir.Db(), "SELECT count(*) FROM baselines"), 1);  // the learned one is gone
  EXPECT_EQ(QueryInt(dir.Db(), "SELECT count(*) FROM baseline_metrics"), 1);
  EXPECT_EQ(QueryInt(dir.Db(), "SELECT count(*) FROM baseline_runs"), 1);
  EXPECT_EQ(QueryInt(dir.Db(), "SELECT seq FROM sqlite_sequence WHERE name = 'baselines'"), 7);
  Result<std::optional<StoredBaseline>> clean = store->GetBaseline("j", "fp", "8:0");
  ASSERT_TRUE(clean && *clean);
  EXPECT_EQ((*clean)->id, 3);
  EXPECT_EQ((*clean)->baseline.band, kCleanBand);
  EXPECT_EQ((*clean)->baseline.run_ids, std::vector<int64_t>{5});
  ASSERT_EQ((*clean)->baseline.metrics.size(), 1u);
  EXPECT_EQ((*clean)->baseline.metrics[0], (MetricBaseline{"read", "iops", 1000, 10}));
  // The run reads back with its conditions, cpu_wait unknown.
  Result<RunRecord> run = store->GetRun(5);
  ASSERT_TRUE(run && run->conditions);
  EXPECT_EQ(run->conditions->cpu_wait, std::nullopt);
  // A load band's baseline goes beside the clean one, and a run it holds
  // cannot be pruned.
  Baseline band = (*clean)->baseline;
  band.band = 4;
  band.metrics[0].median = 600;
  Result<int64_t> band_id = store->PutBaseline(band);
  ASSERT_TRUE(band_id);
  EXPECT_GT(*band_id, 7);  // never the dropped baseline's id again
  Result<std::vector<StoredBaseline>> both = store->SeriesBaselines("j", "fp", "8:0");
  ASSERT_TRUE(both);
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ((*both)[0].baseline.band, 0);
  EXPECT_EQ((*both)[1].baseline.band, 4);
  EXPECT_EQ((*both)[1].baseline.metrics[0].median, 600);
  EXPECT_EQ(store->PruneRunsBefore(1'000'000).value_or(-1), 0);
  // Deleting the job's baselines deletes every band.
  EXPECT_EQ(store->DeleteBaselines("j").value_or(-1), 2);
}

TEST(StoreBaselineIntervals, QuantileIntervalsAndBandsRoundTrip) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store);
  const auto id = store->AddRun(SeriesRun("j", "8:0", 1000));
  ASSERT_TRUE(id);
  Baseline b;
  b.job = "j";
  b.fingerprint = store->GetRun(*id)->fingerprint;
  b.device = "8:0";
  b.band = 2;
  b.run_ids = {*id};
  b.metrics = {{"read", "lat_p99_seconds", 0.002, 0.0001, 250'000, 0.0019, 0.0021}};
  ASSERT_TRUE(store->PutBaseline(b));
  Result<std::optional<StoredBaseline>> got = store->GetBaseline(b.job, b.fingerprint, "8:0", 2);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->baseline.metrics, b.metrics);
  EXPECT_EQ((*got)->baseline.band, 2);
  EXPECT_FALSE(*store->GetBaseline(b.job, b.fingerprint, "8:0"));  // no clean one
}

TEST(StoreRuns, SeriesCandidatesAreTheOkRunsSinceTheResetWithTheirConditions) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store);
  RunRecord measured = SeriesRun("j", "8:0", 3000);
  measured.conditions = SampleConditions();
  ASSERT_TRUE(store->AddRun(SeriesRun("j", "8:0", 1000)));
  ASSERT_TRUE(store->DeleteBaselines("j"));  // a reset: the run before it is forgotten
  const auto unknown = store->AddRun(SeriesRun("j", "8:0", 2000));
  const auto known = store->AddRun(measured);
  ASSERT_TRUE(store->AddRun(SeriesRun("j", "8:0", 4000, /*ok=*/false)));
  ASSERT_TRUE(store->AddRun(SeriesRun("j", "9:0", 5000)));  // another device
  ASSERT_TRUE(unknown && known);
  Result<std::vector<LearningCandidate>> got =
      store->SeriesCandidates("j", store->GetRun(*known)->fingerprint, "8:0");
  ASSERT_TRUE(got) << got.error().ToString();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].id, *unknown);
  EXPECT_EQ((*got)[0].start_unix_ms, 2000);
  EXPECT_EQ((*got)[0].conditions, std::nullopt);
  EXPECT_EQ((*got)[1].id, *known);
  EXPECT_EQ((*got)[1].conditions, measured.conditions);
}

TEST(StoreQuarantine, MovesTheFileAndItsSideFilesAsideWithAUtcStamp) {
  ScratchDir dir;
  const std::filesystem::path db = dir.Path() / "iowatch.db";
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::ofstream(db.string() + suffix) << "bytes" << suffix;
  }
  const auto moved = Store::Quarantine(db, 1'700'000'000);
  ASSERT_TRUE(moved.has_value()) << moved.error().ToString();
  EXPECT_EQ(moved->filename(), "iowatch.db.corrupt-20231114T221320Z");
  for (const char* suffix : {"", "-wal", "-shm"}) {
    EXPECT_FALSE(std::filesystem::exists(db.string() + suffix)) << suffix;
    std::ifstream in(moved->string() + suffix);
    std::string text;
    std::getline(in, text);
    EXPECT_EQ(text, std::string("bytes") + suffix);
  }
  EXPECT_FALSE(Store::Quarantine(db, 1'700'000'001).has_value()) << "nothing left to move";
}

TEST(StoreQuarantine, OnlyDamageCountsNotForeignOrNewerFiles) {
  ScratchDir dir;
  const std::filesystem::path db = dir.Path() / "iowatch.db";
  std::ofstream(db) << std::string(4096, 'x');
  const auto garbage = Store::Open(db);
  ASSERT_FALSE(garbage.has_value());
  EXPECT_TRUE(Store::IsDamagedStore(garbage.error())) << garbage.error().ToString();
  const std::filesystem::path theirs = dir.Path() / "theirs.db";
  std::ofstream{theirs};  // an empty file is an empty SQLite database
  Exec(theirs, "CREATE TABLE t(x)");
  const auto refused = Store::Open(theirs);
  ASSERT_FALSE(refused.has_value());
  EXPECT_FALSE(Store::IsDamagedStore(refused.error())) << refused.error().ToString();
}

}  // namespace
}  // namespace iowatch::probes

namespace iowatch::probes {
namespace {

TEST(StoreSweeps, AddGetAndListNewestFirst) {
  test_store::ScratchDir dir;
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store) << store.error().ToString();
  const SweepRecord first{0, 1000, "vda", "Model S1", "/var/tmp/sweep.0.0", R"({"a": 1})"};
  const SweepRecord second{0, 2000, "nvme0n1", "", "/srv/sweep.0.0", R"({"b": 2})"};
  const auto id1 = store->AddSweep(first);
  const auto id2 = store->AddSweep(second);
  ASSERT_TRUE(id1 && id2);
  EXPECT_LT(*id1, *id2);
  const auto got = store->GetSweep(*id1);
  ASSERT_TRUE(got) << got.error().ToString();
  EXPECT_EQ(got->device, "vda");
  EXPECT_EQ(got->identity, "Model S1");
  EXPECT_EQ(got->report_json, R"({"a": 1})");
  const auto list = store->ListSweeps();
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, *id2);
  EXPECT_TRUE((*list)[0].report_json.empty());  // listed without their JSON
  const auto missing = store->GetSweep(*id2 + 1);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace iowatch::probes
