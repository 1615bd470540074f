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
// The judges' state is in memory: a restart learns again (an hour).
// Thread-safety: OnSample from one thread (the sampling thread); Latest from
// any.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/name_pattern.h"
#include "daemon/passive/passive_feed.h"
#include "daemon/sampling/snapshot.h"
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
  std::array<uint64_t, kPassiveReasons> windows{};  // by PassiveReason, since start
};

struct PassiveSnapshot {
  std::vector<PassiveSeriesRow> series;  // by device, op, size, source
};

// The kernel names not judged by default: device-mapper and md devices.
inline constexpr std::string_view kPassiveDefaultExclude = "(dm-|md).*";

struct PassiveOptions {
  PassiveFeedOptions feed;
  probes::PassiveJudgePolicy judge;
  std::optional<NamePattern> exclude;  // whole kernel names not judged; none: all
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
  bool Judges(const Snapshot& snapshot, const std::string& device) const;
  // Drops the judge and series of a name that is another disk now.
  void ForgetReplacedDisks(const Snapshot& snapshot);
  void Publish();

  PassiveOptions options_;
  PassiveFeed feed_;
  std::map<std::string, probes::PassiveJudge> judges_;  // by device
  std::map<std::string, std::string> identities_;       // by device: IdentityOf when judged first
  std::map<std::tuple<std::string, std::string, std::string, probes::PassiveSource>,
           PassiveSeriesRow>
      rows_;
  mutable std::mutex mutex_;
  std::shared_ptr<const PassiveSnapshot> latest_;
};

}  // namespace iowatch::daemon
