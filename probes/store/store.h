// Store: the embedded SQLite database of probe runs and baselines, one file
// in the daemon's state directory (<state_dir>/iowatch.db, mode 0600). The
// daemon's probe worker writes every run to it; `iowatch baseline …` reads and
// edits the same file from another process.
//
// Durability: WAL journal with synchronous=FULL. Once AddRun returns an id,
// the run survives a kill -9 of the process at any later moment (that alone
// would hold with synchronous=NORMAL, since a WAL commit is in the kernel's
// page cache before it returns) and also an OS crash or power loss, because
// FULL fsyncs the WAL at every commit. That costs one fsync per run, every few
// minutes at most: nothing next to the probe's own I/O. Every write is one
// transaction, so a run, a baseline or an import is stored whole or not at
// all; a crash in the middle leaves the previous state.
//
// Sharing: WAL lets the CLI read while the daemon writes; writers take the
// lock up front (BEGIN IMMEDIATE) and wait up to kBusyTimeout for each other.
//
// Errors: every method returns a Result and never throws. An Error's path is
// the database file and its message says what was being done and what SQLite
// said, with the code's name:
//   /var/lib/iowatch/iowatch.db: adding run: database or disk is full (SQLITE_FULL)
// A failed write leaves nothing half-written and the Store usable: when space
// returns (or the lock is released) the next call succeeds. Open fails when
// the directory is missing (it is not created here) or not writable, and it
// refuses, untouched, a file that holds another program's tables. Only a
// regular file is opened (and a -wal or -shm beside it only if regular):
// SQLite would wait forever on a FIFO and read a device as garbage.
//
// Schema: see store_schema.cc (tables runs, run_ops, run_metrics, baselines,
// baseline_metrics, baseline_runs, sweeps, series_states,
// series_states_quarantine, run_verdicts, passive_states, passive_windows,
// passive_states_quarantine, passive_resets), versioned with PRAGMA
// user_version; a file from a newer iowatch is refused (kUnsupported).
// Histogram blobs and the job options text: store_codec.h. Baseline JSON:
// store_json.h.
//
// Thread-safety: none. One Store per thread (the daemon's probe worker owns
// one, the CLI opens its own); processes and threads coordinate through
// SQLite's file locks, never through a shared Store.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "probes/run/probe_result.h"
#include "probes/store/store_passive_rows.h"
#include "probes/verdicts/baseline.h"
#include "probes/verdicts/job_judge.h"
#include "probes/verdicts/run_metrics.h"
#include "probes/verdicts/run_record.h"

namespace iowatch::probes {

namespace internal {
class Connection;
}

// Which successful runs a baseline is built from: the first N (learning) or
// the latest N (`iowatch baseline capture`).
enum class BaselineRuns { kFirst, kLast };

struct SweepRecord {
  int64_t id = 0;
  int64_t started_unix_ms = 0;
  std::string device;
  std::string identity;
  std::string target;
  std::string report_json;
};

// A probe series' verdict state as of one of its runs (series_states).
struct StoredSeriesState {
  std::string job;
  std::string fingerprint;
  std::string device;
  int64_t through_run_id = 0;  // the last run the state has seen
  SeriesState state;
};

// A series_states row whose verdict state could not be read: its key as
// stored (raw bytes of the file) and what was wrong with it.
struct UnreadableSeriesState {
  std::string job;
  std::string fingerprint;
  std::string device;
  std::string why;
  // `series_states row (job "…", fingerprint "…", device "…"): expected …,
  // found …`: raw bytes of the file (nlohmann quotes what it last read), for
  // the output to escape (TerminalText in a log or a terminal).
  std::string Describe() const;
};

// Whether a run was judged and, if not, why (NotJudged's word, "judged"
// when it was), as PutSeriesState stores it in run_verdicts.
struct RunVerdictRow {
  int64_t run_id = 0;
  bool judged = false;
  std::string reason;
};

// Whether a stored run was judged (run_verdicts), with its job and start.
struct StoredRunVerdict {
  std::string job;
  int64_t start_unix_ms = 0;
  bool judged = false;
  std::string reason;  // NotJudged's word; "judged" when it was
  bool operator==(const StoredRunVerdict&) const = default;
};

class Store {
 public:
  static constexpr std::string_view kFileName = "iowatch.db";
  static constexpr std::chrono::milliseconds kBusyTimeout{5000};
  // SQLite's page cache per connection (PRAGMA cache_size), in KiB.
  static constexpr int kPageCacheKiB = 512;

  // Opens (creating, mode 0600) the database at `path` and brings its schema
  // up to date.
  static Result<Store> Open(const std::filesystem::path& path);
  // Open(state_dir / kFileName).
  static Result<Store> OpenInStateDir(const std::filesystem::path& state_dir);
  // Moves a damaged store aside, with its -wal and -shm: to
  // "<file>.corrupt-<UTC time YYYYmmddTHHMMSSZ>" in the same directory, so the
  // daemon can start a new one and the old file stays for the operator (and
  // `sqlite3 .recover`). Returns the new name of the main file. Only for an
  // error IsDamagedStore says so of: a foreign database or a newer schema is
  // never moved.
  static Result<std::filesystem::path> Quarantine(const std::filesystem::path& path,
                                                  int64_t unix_seconds);
  // The error says the file is not a database or is corrupt (SQLITE_NOTADB,
  // SQLITE_CORRUPT), not that it is someone else's or newer.
  static bool IsDamagedStore(const Error& error);
  // Opens an existing store without writing anything to it: no file is
  // created, no WAL switch, no migration (so it works on a read-only mount
  // and never alters a file that is not an iowatch store). kNotFound when the
  // file is missing or holds no iowatch schema yet; kUnsupported when its
  // schema is older or newer than this build's. Writing methods fail
  // (SQLITE_READONLY).
  static Result<Store> OpenReadOnly(const std::filesystem::path& path);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::string& Path() const;

  // Whether the file this Store has open is still the database at Path(),
  // whole: kNotFound when it was removed (or renamed away), kIo when another
  // file took its place, kParse (IsDamagedStore) when it was truncated (its
  // size no longer whole pages, or less than one). SQLite notices none of
  // these: it goes on writing into the removed or truncated file, and every
  // run written after is lost at the next open. The daemon checks before
  // each run it stores (ProbeRecorder).
  Status CheckFile() const;

  // --- Runs (store_runs.cc) ---------------------------------------------

  // Stores the run, its directions and its metrics in one transaction;
  // returns the new id. A direction that did nothing gets no run_ops row.
  Result<int64_t> AddRun(const RunRecord& run);
  // kNotFound when there is no run `id`.
  Result<RunRecord> GetRun(int64_t id) const;
  // A run's stored metrics alone, as stored (an old run's missing ones are
  // not computed, unlike GetRun's); empty for an unknown id.
  Result<std::vector<MetricSample>> GetRunMetrics(int64_t id) const;
  // Newest first (by start time, then id). An empty job, fingerprint or
  // device matches any; only_ok keeps successful runs only.
  Result<std::vector<RunRecord>> RecentRuns(std::string_view job, std::string_view fingerprint,
                                            std::string_view device, size_t limit,
                                            bool only_ok = false) const;
  // Up to n successful runs of exactly this job, fingerprint and device,
  // stored since the job's last DeleteBaselines, oldest first: the first n,
  // or the latest n.
  Result<std::vector<RunRecord>> RunsForBaseline(std::string_view job, std::string_view fingerprint,
                                                 std::string_view device, size_t n,
                                                 BaselineRuns which) const;
  // Deletes the runs that started before `unix_ms` (with their directions and
  // metrics) except those a baseline was built from, which are kept as long
  // as the baseline is; returns how many runs were deleted.
  Result<int64_t> PruneRunsBefore(int64_t unix_ms);
  // The successful runs of exactly this series stored since the job's last
  // DeleteBaselines, oldest first, with their conditions only: what learning
  // a band's baseline picks from (JudgeRun).
  Result<std::vector<LearningCandidate>> SeriesCandidates(std::string_view job,
                                                          std::string_view fingerprint,
                                                          std::string_view device) const;
  // The latest start_unix_ms of any stored run; nullopt when there is none.
  Result<std::optional<int64_t>> NewestRunStartMs() const;

  // --- Sweeps (store_sweeps.cc) -----------------------------------------
  // A sweep's report as its JSON, with where it ran; ids increase.
  Result<int64_t> AddSweep(const SweepRecord& sweep);
  Result<SweepRecord> GetSweep(int64_t id) const;  // kNotFound when there is none
  // Newest first, without their JSON.
  Result<std::vector<SweepRecord>> ListSweeps() const;

  // --- Baselines (store_baselines.cc) -----------------------------------

  // Stores the baseline, replacing the one of the same job, fingerprint,
  // device and band if any; its run_ids must be runs in the store. Returns
  // its id.
  Result<int64_t> PutBaseline(const Baseline& baseline, bool pinned = false);
  // The baseline of one band (the clean runs' by default) of a series.
  Result<std::optional<StoredBaseline>> GetBaseline(std::string_view job,
                                                    std::string_view fingerprint,
                                                    std::string_view device,
                                                    int band = kCleanBand) const;
  // Every band's baseline of a series, by band.
  Result<std::vector<StoredBaseline>> SeriesBaselines(std::string_view job,
                                                      std::string_view fingerprint,
                                                      std::string_view device) const;
  // Ordered by job, fingerprint, device, band.
  Result<std::vector<StoredBaseline>> ListBaselines() const;
  // Deletes the load bands' baselines of one series (every band but the
  // clean runs'); returns how many. `baseline capture` does, so that the
  // bands relearn after the new norm.
  Result<int64_t> DeleteLoadBandBaselines(std::string_view job, std::string_view fingerprint,
                                          std::string_view device);
  // Deletes every baseline of `job` (any fingerprint, device or band); returns how
  // many. Their runs stay (and become prunable), but RunsForBaseline never
  // returns them again: a reset job learns from the runs stored after it.
  Result<int64_t> DeleteBaselines(std::string_view job);
  // Validates the whole document first, then stores every baseline in one
  // transaction, each pinned, without run ids, replacing any baseline of the
  // same job, fingerprint and device. `source` names the input in errors
  // (e.g. the file name): "golden.json:4:17: baselines[0].runs: expected …".
  Result<int64_t> ImportBaselines(std::string_view json, std::string_view source = "<input>");
  // Stores `baselines` as they are (BaselinesFromJson's, perhaps retargeted to
  // this host's jobs), each pinned, in one transaction; returns how many.
  Result<int64_t> PinBaselines(std::span<const StoredBaseline> baselines);

  // --- Verdict state per series (store_series.cc) ------------------------

  // Stores (replaces) the series' state and, in the same transaction, the
  // verdicts of the runs it was judged through since its last state: a kill
  // leaves both or neither, so a run judged again after a kill (its state
  // not stored) has no verdict yet, and one whose verdict is stored is not
  // judged again.
  Status PutSeriesState(const StoredSeriesState& state,
                        std::span<const RunVerdictRow> verdicts = {});
  // Every readable series' state. A row whose JSON cannot be read is left
  // out and named in `unreadable` (one bad row never costs the other series
  // their state); the error is SQLite's alone. Each tracker is `rule` (its
  // hysteresis and span) with the stored streaks.
  Result<std::vector<StoredSeriesState>> SeriesStates(
      const RegressionTracker& rule, std::vector<UnreadableSeriesState>& unreadable) const;
  // Moves an unreadable row to series_states_quarantine (with now and why),
  // in one transaction, so that no later start reads it again and the
  // operator still finds it there.
  Status QuarantineSeriesState(const UnreadableSeriesState& row, int64_t now_unix_ms);
  Status DeleteSeriesState(std::string_view job, std::string_view fingerprint,
                           std::string_view device);

  // --- The passive judge (store_passive.cc) -----------------------------

  // In one transaction: the windows (replacing any of the same series and
  // end), the marks of windows learned since they were stored, and the
  // series' states (replacing theirs). A kill leaves all or none.
  Status PutPassive(std::span<const StoredPassiveWindow> windows,
                    std::span<const PassiveLearnedMark> learned,
                    std::span<const StoredPassiveState> states);
  // Every readable series' state; an unreadable row is left out and named
  // in `unreadable`, as SeriesStates does.
  Result<std::vector<StoredPassiveState>> PassiveStates(
      std::vector<UnreadablePassiveState>& unreadable) const;
  // Moves an unreadable row to passive_states_quarantine (with now and why).
  Status QuarantinePassiveState(const UnreadablePassiveState& row, int64_t now_unix_ms);
  // The newest `limit` windows the series learned from, oldest first; with
  // `reference`, its drift reference's windows instead.
  Result<std::vector<PassivePoint>> PassiveLearned(std::string_view device, std::string_view op,
                                                   std::string_view size, PassiveSource source,
                                                   size_t limit, bool reference = false) const;
  // Every stored window that ended in [from_unix_ms, to_unix_ms), by device,
  // op, size, source, then end.
  Result<std::vector<StoredPassiveWindow>> PassiveWindows(int64_t from_unix_ms,
                                                          int64_t to_unix_ms) const;
  // Deletes a device's state and windows (another disk took its name).
  Status DeletePassiveDevice(std::string_view device);
  // Deletes a device's state and windows and records the reset at `unix_ms`
  // for a running daemon to see (PassiveResetsAfter); returns how many
  // series' states were deleted.
  Result<int64_t> ResetPassiveDevice(std::string_view device, int64_t unix_ms);
  // The devices reset after `unix_ms`, with when, oldest first.
  Result<std::vector<std::pair<std::string, int64_t>>> PassiveResetsAfter(int64_t unix_ms) const;
  // Deletes the windows that ended before `unix_ms`, except each series'
  // newest `keep_learned` learned ones (what a restart refits from) and its
  // drift reference's; returns how many.
  Result<int64_t> PrunePassiveWindows(int64_t unix_ms, size_t keep_learned);

  // --- Whether each run was judged (store_verdicts.cc) -------------------

  // One run's verdict alone (PutSeriesState stores the daemon's).
  Status PutRunVerdict(int64_t run_id, bool judged, std::string_view reason);
  // The verdicts of runs that started at or after since_unix_ms, oldest first.
  Result<std::vector<StoredRunVerdict>> RunVerdictsSince(int64_t since_unix_ms) const;
  // Per job, the start of its newest judged run.
  Result<std::vector<std::pair<std::string, int64_t>>> LastJudgedRuns() const;
  // The verdicts stored for these runs, by run id (a run stored before
  // schema 8, or by `iowatch probe`, has none).
  Result<std::map<int64_t, StoredRunVerdict>> RunVerdictsOf(std::span<const RunRecord> runs) const;

 private:
  explicit Store(std::unique_ptr<internal::Connection> connection);

  std::unique_ptr<internal::Connection> connection_;
};

}  // namespace iowatch::probes
