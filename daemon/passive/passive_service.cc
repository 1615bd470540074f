#include "daemon/passive/passive_service.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace iowatch::daemon {

PassiveService::PassiveService(PassiveOptions options)
    : options_(std::move(options)),
      feed_(options_.feed),
      latest_(std::make_shared<PassiveSnapshot>()) {}

PassiveService::~PassiveService() = default;

bool PassiveService::Judges(const Snapshot& snapshot, const std::string& device) const {
  if (options_.exclude && options_.exclude->FullMatch(device)) return false;
  if (!snapshot.block_devices) return true;
  const auto it =
      std::ranges::find(*snapshot.block_devices, device, &collectors::BlockDevice::name);
  return it == snapshot.block_devices->end() || !it->is_partition;
}

namespace {

// Which physical disk a name is now: its diskseq (a new one each time a
// disk appears), else its serial and wwid; "" when sysfs says none.
std::string IdentityOf(const Snapshot& snapshot, const std::string& device) {
  if (!snapshot.block_devices) return {};
  const auto it =
      std::ranges::find(*snapshot.block_devices, device, &collectors::BlockDevice::name);
  if (it == snapshot.block_devices->end()) return {};
  if (it->diskseq) return std::to_string(*it->diskseq);
  return it->serial + "/" + it->wwid;
}

}  // namespace

void PassiveService::ForgetReplacedDisks(const Snapshot& snapshot) {
  for (auto it = identities_.begin(); it != identities_.end();) {
    if (IdentityOf(snapshot, it->first) == it->second) {
      ++it;
      continue;
    }
    // Another disk under the same name (replaced, or removed and added):
    // the old one's model and verdicts are not its.
    judges_.erase(it->first);
    std::erase_if(rows_, [&](const auto& entry) { return entry.second.device == it->first; });
    it = identities_.erase(it);
  }
}

void PassiveService::OnSample(const Snapshot& snapshot, std::span<const std::string> probing) {
  const std::vector<probes::PassiveWindow> windows = feed_.Add(snapshot, probing);
  if (windows.empty()) return;
  ForgetReplacedDisks(snapshot);
  for (const probes::PassiveWindow& w : windows) {
    if (!Judges(snapshot, w.device)) continue;
    // A series starts with its first window busy enough to judge: an idle
    // disk (or op) costs nothing and exports nothing.
    const auto key = std::make_tuple(w.device, w.op, w.size, w.source);
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
    const probes::PassiveSeriesKey series{w.op, w.size, w.source};
    row.regressed = judge->second.Regressed(series);
    if (v.change && v.change->regressed) row.regressed_since_ms = v.change->since_ms;
    if (!row.regressed) row.regressed_since_ms = 0;
    const probes::PassiveModel* model = judge->second.Model(series);
    row.model_windows = model == nullptr ? 0 : model->Windows();
    if (v.reason == probes::PassiveReason::kJudged) row.judged = v;
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
  Publish();
}

void PassiveService::Publish() {
  auto snapshot = std::make_shared<PassiveSnapshot>();
  snapshot->series.reserve(rows_.size());
  for (const auto& [key, row] : rows_) snapshot->series.push_back(row);
  const std::lock_guard lock(mutex_);
  latest_ = std::move(snapshot);
}

std::shared_ptr<const PassiveSnapshot> PassiveService::Latest() const {
  const std::lock_guard lock(mutex_);
  return latest_;
}

}  // namespace iowatch::daemon
