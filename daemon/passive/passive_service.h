// PassiveService: the passive judge in the daemon. Each sample goes through
// the feed (passive_feed.h); each window it closes goes to its disk's judge
// (probes/verdicts/passive/passive_judge.h); what the judges said last is
// published as an immutable PassiveSnapshot for /metrics.
//
// Judged: the sample's whole disks (partitions are their disk's I/O) whose
// name `exclude` does not match (kPassiveDefaultExclude: device-mapper and md devices:
// their members are judged instead, and one slow member would otherwise be
// raised twice). A series (disk, op, ...) starts with its first window of
// at least passive's min_requests: an idle disk costs nothing and exports
// nothing. A probe of iowatch's on a disk leaves its window unjudged.
//
// With a state directory, the judges' states and windows are stored
// (passive_store.h): every `store_every_ms`, and at once when a series is
// raised or cleared; a start restores each series whose disk is the same
// physical disk (its identity), so a restart neither forgets a regression
// nor learns again. Without one, or when the store cannot be opened, the
// judges run in memory (said in the log and by iowatch_passive_store_up).
// Thread-safety: OnSample from one thread (the sampling thread); Latest from
// any.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/name_pattern.h"
#include "daemon/passive/passive_feed.h"
#include "daemon/passive/passive_store.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/snapshot_health.h"
#include "probes/verdicts/passive/passive_judge.h"

namespace iowatch::daemon {

inline constexpr size_t kPassiveReasons = 6;  // probes::PassiveReason's values

struct PassiveSeriesRow {
  std::string device;
  std::string op;
  std::string size;
  probes::PassiveSource source = probes::PassiveSource::kDiskstats;
  probes::PassiveVerdict last;                   // the last window's
  std::optional<probes::PassiveVerdict> judged;  // the last judged window's
  bool regressed = false;
  int64_t regressed_since_ms = 0;                   // the first bad window's start
  size_t model_windows = 0;                         // what the model learned from; 0 while learning
  std::optional<double> drift_ratio;                // mean latency over its first day's (drift)
  bool drift_raised = false;                        // the drift watch holds it regressed
  std::array<uint64_t, kPassiveReasons> windows{};  // by PassiveReason, since start
  // The requests of its windows with no probe of iowatch's inside, and their
  // summed latency, since start: a mean over any span, whatever the scrape.
  uint64_t production_requests = 0;
  double production_seconds = 0;
  // The judged windows' latency summed as observed and as predicted (each
  // window's requests times its mean, and times the model's): their rates'
  // ratio is the series' ratio to its own past over any span.
  double judged_seconds = 0;
  double predicted_seconds = 0;
};

struct PassiveSnapshot {
  std::vector<PassiveSeriesRow> series;  // by device, op, size, source
  bool store_up = false;                 // the states and windows are being stored
  uint64_t store_errors = 0;             // batches of them lost since start
};

// The series' verdicts for the disks' health (snapshot_health.h).
std::vector<PassiveSeriesVerdict> PassiveVerdictsOf(const PassiveSnapshot& snapshot);
// The verdicts a store kept, of the disks in `snapshot` that are still the
// physical disk they were (iowatch health, while or after the daemon runs).
std::vector<PassiveSeriesVerdict> StoredPassiveVerdicts(
    std::span<const probes::StoredPassiveState> states, const Snapshot& snapshot);

// The kernel names not judged by default: device-mapper and md devices.
inline constexpr std::string_view kPassiveDefaultExclude = "(dm-|md).*";

struct PassiveOptions {
  PassiveFeedOptions feed;
  probes::PassiveJudgePolicy judge;
  std::optional<NamePattern> exclude;    // whole kernel names not judged; none: all
  std::filesystem::path state_dir;       // the store's directory; empty: in memory only
  int64_t store_every_ms = 300'000;      // windows and states written this often
  int64_t keep_windows_ms = 86'400'000;  // windows kept (the learned ones a restart needs: always)
  std::chrono::milliseconds reset_poll{std::chrono::seconds(60)};  // passive-reset seen within
  // Called on the sampling thread with a disk's name when one of its series
  // is raised (the daemon asks the disk's probes to confirm); may be empty.
  std::function<void(const std::string& device)> on_raise;
};

class PassiveService {
 public:
  explicit PassiveService(PassiveOptions options);
  ~PassiveService();
  PassiveService(const PassiveService&) = delete;
  PassiveService& operator=(const PassiveService&) = delete;

  // One sample; `probing`: the disks a probe of iowatch's ran on since the
  // previous sample (kernel names).
  void OnSample(const Snapshot& snapshot, std::span<const std::string> probing);
  std::shared_ptr<const PassiveSnapshot> Latest() const;

 private:
  using FullKey = std::tuple<std::string, std::string, std::string, probes::PassiveSource>;

  bool Judges(const Snapshot& snapshot, const std::string& device) const;
  // Gives each disk of the sample that the store knew its series back, once.
  void RestoreStored(const Snapshot& snapshot);
  void RestoreSeries(const std::string& identity, PassiveRestored& restored);
  // Notes a judged window for the store.
  void Keep(const probes::PassiveVerdict& v);
  // Hands what was kept to the store when it is time (or `now`).
  void Flush(int64_t now_ms, bool now);
  // Drops the judge and series of a name that is another disk now.
  void ForgetReplacedDisks(const Snapshot& snapshot);
  // Drops a disk's judge and series, here and in the store.
  void Forget(const std::string& device);
  void Publish();

  PassiveOptions options_;
  PassiveFeed feed_;
  std::map<std::string, probes::PassiveJudge> judges_;  // by device
  std::map<std::string, std::string> identities_;       // by device: IdentityOf when judged first
  std::map<FullKey, PassiveSeriesRow> rows_;
  std::unique_ptr<PassiveStore> store_;
  std::map<std::string, std::vector<PassiveRestored>> stored_;  // by device, not yet seen
  PassiveBatch batch_;                                          // kept since the last flush
  std::set<FullKey> dirty_;  // series judged since the last flush
  int64_t flushed_ms_ = 0;
  int64_t pruned_ms_ = 0;
  mutable std::mutex mutex_;
  std::shared_ptr<const PassiveSnapshot> latest_;
};

}  // namespace iowatch::daemon
