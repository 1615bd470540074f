#include "daemon/passive/passive_service.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "common/log.h"

namespace iowatch::daemon {

PassiveService::PassiveService(PassiveOptions options)
    : options_(std::move(options)),
      feed_(options_.feed),
      latest_(std::make_shared<PassiveSnapshot>()) {
  if (options_.state_dir.empty()) return;
  std::vector<PassiveRestored> restored;
  Result<std::unique_ptr<PassiveStore>> store = PassiveStore::Open(
      options_.state_dir, options_.judge.max_windows, restored, options_.reset_poll);
  if (!store) {
    spdlog::warn(
        "passive judge: {}; judging in memory: a restart forgets its verdicts and learns again",
        store.error().ToString());
    return;
  }
  store_ = std::move(*store);
  for (PassiveRestored& r : restored) stored_[r.state.device].push_back(std::move(r));
  Publish();
}

PassiveService::~PassiveService() {
  if (store_) Flush(0, true);
}

bool PassiveService::Judges(const Snapshot& snapshot, const std::string& device) const {
  if (options_.exclude && options_.exclude->FullMatch(device)) return false;
  if (!snapshot.block_devices) return true;
  const auto it =
      std::ranges::find(*snapshot.block_devices, device, &collectors::BlockDevice::name);
  return it == snapshot.block_devices->end() || !it->is_partition;
}

namespace {

// Which physical disk a name is now: its serial and wwid, which survive a
// reboot (a stored series is restored after one); else its diskseq (a new
// one each time a disk appears, so a disk without a serial learns afresh
// after a reboot or a re-add); "" when sysfs says none.
std::string IdentityOf(const Snapshot& snapshot, const std::string& device) {
  if (!snapshot.block_devices) return {};
  const auto it =
      std::ranges::find(*snapshot.block_devices, device, &collectors::BlockDevice::name);
  if (it == snapshot.block_devices->end()) return {};
  if (!it->serial.empty() || !it->wwid.empty()) return it->serial + "/" + it->wwid;
  if (it->diskseq) return "diskseq " + std::to_string(*it->diskseq);
  return {};
}

// The window's requests and latency into the series' production totals:
// not a window with a probe inside, nor one whose counters went back.
void CountProduction(const probes::PassiveWindow& w, PassiveSeriesRow& row) {
  if (w.probe || w.counters_reset || w.requests == 0 || !std::isfinite(w.mean_seconds)) return;
  row.production_requests += w.requests;
  row.production_seconds += static_cast<double>(w.requests) * w.mean_seconds;
}

void CountJudged(const probes::PassiveVerdict& v, PassiveSeriesRow& row) {
  if (v.reason != probes::PassiveReason::kJudged) return;
  const auto requests = static_cast<double>(v.window.requests);
  row.judged_seconds += requests * v.window.mean_seconds;
  row.predicted_seconds += requests * v.predicted_seconds;
}

}  // namespace

void PassiveService::RestoreSeries(const std::string& identity, PassiveRestored& restored) {
  const probes::StoredPassiveState& s = restored.state;
  auto [judge, added] = judges_.try_emplace(s.device, options_.judge);
  if (added) identities_[s.device] = identity;
  const probes::PassiveSeriesKey series{s.op, s.size, s.source};
  judge->second.Restore(series, s.state, restored.learned, restored.reference);
  PassiveSeriesRow& row = rows_[{s.device, s.op, s.size, s.source}];
  row.device = s.device;
  row.op = s.op;
  row.size = s.size;
  row.source = s.source;
  row.regressed = judge->second.Regressed(series);
  row.regressed_since_ms = judge->second.RegressedSinceMs(series);
  const probes::PassiveModel* model = judge->second.Model(series);
  row.model_windows = model == nullptr ? 0 : model->Windows();
  row.drift_ratio = judge->second.Drift(series)->Ratio();
  row.drift_raised = judge->second.Drift(series)->Raised();
  if (s.last_judged) {
    probes::PassiveVerdict v;
    v.window.device = s.device;
    v.window.op = s.op;
    v.window.size = s.size;
    v.window.source = s.source;
    v.window.end_ms = s.last_judged->end_ms;
    v.window.mean_seconds = s.last_judged->mean_seconds;
    v.predicted_seconds = s.last_judged->predicted_seconds;
    v.ratio = s.last_judged->ratio;
    v.bound_ratio = s.last_judged->bound_ratio;
    row.judged = v;
  }
}

void PassiveService::RestoreStored(const Snapshot& snapshot) {
  for (auto it = stored_.begin(); it != stored_.end();) {
    const std::string& device = it->first;
    const bool present = std::ranges::any_of(
        snapshot.devices, [&](const DeviceSnapshot& d) { return d.name == device; });
    if (!present) {  // not (yet) there: kept for when it appears
      ++it;
      continue;
    }
    const std::string identity = IdentityOf(snapshot, device);
    if (!Judges(snapshot, device)) {
      it = stored_.erase(it);  // excluded now: its states stay in the store, unused
      continue;
    }
    for (PassiveRestored& r : it->second) {
      if (r.state.identity == identity) {
        RestoreSeries(identity, r);
        continue;
      }
      spdlog::info(
          "passive judge: {} is another disk than when its {} {} series was stored "
          "({} then, {} now): it learns afresh",
          device, r.state.op, r.state.size, r.state.identity, identity);
      batch_.forget_devices.push_back(device);
    }
    it = stored_.erase(it);
  }
}

void PassiveService::Keep(const probes::PassiveVerdict& v) {
  const probes::PassiveWindow& w = v.window;
  probes::StoredPassiveWindow stored;
  stored.window = w;
  stored.reason = std::string(probes::ToString(v.reason));
  stored.predicted_seconds = v.predicted_seconds;
  stored.bound_ratio = v.bound_ratio;
  stored.bad = v.bad;
  for (const probes::PassivePoint& p : v.learned) {
    if (p.end_ms == w.end_ms) {
      stored.learned = true;
      continue;
    }
    // A window of a streak that broke, stored before.
    batch_.learned.push_back({w.device, w.op, w.size, w.source, p.end_ms, false});
  }
  for (const probes::PassivePoint& p : v.reference) {
    batch_.learned.push_back({w.device, w.op, w.size, w.source, p.end_ms, true});
  }
  batch_.windows.push_back(std::move(stored));
  dirty_.insert({w.device, w.op, w.size, w.source});
}

void PassiveService::Flush(int64_t now_ms, bool now) {
  if (!now && now_ms - flushed_ms_ < options_.store_every_ms) return;
  flushed_ms_ = now_ms;
  for (const FullKey& key : dirty_) {
    const auto& [device, op, size, source] = key;
    const auto judge = judges_.find(device);
    const auto row = rows_.find(key);
    if (judge == judges_.end() || row == rows_.end()) continue;
    probes::StoredPassiveState s;
    s.device = device;
    s.op = op;
    s.size = size;
    s.source = source;
    s.identity = identities_[device];
    s.through_unix_ms = row->second.last.window.end_ms;
    s.state = judge->second.StateOf({op, size, source});
    if (const auto& j = row->second.judged) {
      s.last_judged = probes::PassiveJudgedFigures{j->window.end_ms, j->window.mean_seconds,
                                                   j->predicted_seconds, j->ratio, j->bound_ratio};
    }
    batch_.states.push_back(std::move(s));
  }
  dirty_.clear();
  constexpr int64_t kPruneEveryMs = 3'600'000;
  if (now_ms - pruned_ms_ >= kPruneEveryMs && now_ms > options_.keep_windows_ms) {
    batch_.prune_before_ms = now_ms - options_.keep_windows_ms;
    pruned_ms_ = now_ms;
  }
  store_->Post(std::exchange(batch_, {}));
}

void PassiveService::Forget(const std::string& device) {
  judges_.erase(device);
  identities_.erase(device);
  stored_.erase(device);
  std::erase_if(rows_, [&](const auto& entry) { return entry.second.device == device; });
  std::erase_if(dirty_, [&](const FullKey& key) { return std::get<0>(key) == device; });
  if (!store_) return;
  // What the batch holds of the old disk would be stored after the forget.
  DropDevice(batch_, device);
  batch_.forget_devices.push_back(device);
}

void PassiveService::ForgetReplacedDisks(const Snapshot& snapshot) {
  std::vector<std::string> replaced;
  for (const auto& [device, identity] : identities_) {
    // Another disk under the same name (replaced, or removed and added):
    // the old one's model and verdicts are not its.
    if (IdentityOf(snapshot, device) != identity) replaced.push_back(device);
  }
  for (const std::string& device : replaced) Forget(device);
}

void PassiveService::OnSample(const Snapshot& snapshot, std::span<const std::string> probing) {
  if (store_) {
    const std::vector<std::string> reset = store_->TakeResets();
    for (const std::string& device : reset) Forget(device);
    if (!reset.empty()) Publish();
  }
  if (!stored_.empty()) {
    RestoreStored(snapshot);
    Publish();
  }
  const std::vector<probes::PassiveWindow> windows = feed_.Add(snapshot, probing);
  if (windows.empty()) return;
  ForgetReplacedDisks(snapshot);
  bool changed = false;
  for (const probes::PassiveWindow& w : windows) {
    if (!Judges(snapshot, w.device)) continue;
    // A series starts with its first window busy enough to judge: an idle
    // disk (or op) costs nothing and exports nothing.
    const FullKey key{w.device, w.op, w.size, w.source};
    if (!rows_.contains(key) && w.requests < options_.judge.model.min_requests) continue;
    auto [judge, added] = judges_.try_emplace(w.device, options_.judge);
    if (added) identities_[w.device] = IdentityOf(snapshot, w.device);
    probes::PassiveVerdict v = judge->second.Judge(w);
    PassiveSeriesRow& row = rows_[key];
    row.device = w.device;
    row.op = w.op;
    row.size = w.size;
    row.source = w.source;
    ++row.windows[static_cast<size_t>(v.reason)];
    CountProduction(w, row);
    CountJudged(v, row);
    const probes::PassiveSeriesKey series{w.op, w.size, w.source};
    row.regressed = judge->second.Regressed(series);
    row.regressed_since_ms = judge->second.RegressedSinceMs(series);
    const probes::PassiveModel* model = judge->second.Model(series);
    row.model_windows = model == nullptr ? 0 : model->Windows();
    row.drift_ratio = judge->second.Drift(series)->Ratio();
    row.drift_raised = judge->second.Drift(series)->Raised();
    if (v.reason == probes::PassiveReason::kJudged) row.judged = v;
    changed = changed || v.change.has_value();
    if (v.change && v.change->regressed && options_.on_raise) options_.on_raise(w.device);
    if (store_) Keep(v);
    row.last = std::move(v);
  }
  // Disks gone from the sample take their series with them.
  std::erase_if(rows_, [&](const auto& entry) {
    return std::ranges::none_of(
        snapshot.devices, [&](const DeviceSnapshot& d) { return d.name == entry.second.device; });
  });
  std::erase_if(judges_, [&](const auto& entry) {
    return std::ranges::none_of(snapshot.devices,
                                [&](const DeviceSnapshot& d) { return d.name == entry.first; });
  });
  std::erase_if(identities_, [&](const auto& entry) { return !judges_.contains(entry.first); });
  // A raise or clear is stored at once: a kill after it keeps the verdict.
  if (store_) Flush(windows.front().end_ms, changed);
  Publish();
}

void PassiveService::Publish() {
  auto snapshot = std::make_shared<PassiveSnapshot>();
  snapshot->store_up = store_ != nullptr;
  snapshot->store_errors = store_ ? store_->Errors() : 0;
  snapshot->series.reserve(rows_.size());
  for (const auto& [key, row] : rows_) snapshot->series.push_back(row);
  const std::lock_guard lock(mutex_);
  latest_ = std::move(snapshot);
}

std::shared_ptr<const PassiveSnapshot> PassiveService::Latest() const {
  const std::lock_guard lock(mutex_);
  return latest_;
}

std::vector<PassiveSeriesVerdict> PassiveVerdictsOf(const PassiveSnapshot& snapshot) {
  std::vector<PassiveSeriesVerdict> out;
  out.reserve(snapshot.series.size());
  for (const PassiveSeriesRow& row : snapshot.series) {
    out.push_back({row.device, row.op, row.size, std::string(probes::ToString(row.source)),
                   row.regressed, row.regressed_since_ms, row.judged ? row.judged->ratio : 0,
                   row.drift_raised ? row.drift_ratio.value_or(0) : 0});
  }
  return out;
}

std::vector<PassiveSeriesVerdict> StoredPassiveVerdicts(
    std::span<const probes::StoredPassiveState> states, const Snapshot& snapshot) {
  std::vector<PassiveSeriesVerdict> out;
  for (const probes::StoredPassiveState& s : states) {
    if (IdentityOf(snapshot, s.device) != s.identity) continue;  // another disk now
    probes::RegressionTracker tracker;
    tracker.Restore(s.state.tracker);
    const probes::PassiveDriftState& drift = s.state.drift;
    int64_t since = tracker.RegressedSinceMs(s.op, probes::kPassiveMetric);
    if (drift.raised && (since == 0 || drift.since_ms < since)) since = drift.since_ms;
    out.push_back({s.device, s.op, s.size, std::string(probes::ToString(s.source)),
                   tracker.AnyRegressed() || drift.raised, since,
                   s.last_judged ? s.last_judged->ratio : 0,
                   drift.raised ? std::exp(drift.level.value_or(0)) : 0});
  }
  return out;
}

}  // namespace iowatch::daemon
