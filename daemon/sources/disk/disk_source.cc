#include "daemon/sources/disk/disk_source.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectors/disk/block_devices.h"
#include "collectors/disk/disk_sample.h"
#include "collectors/disk/diskstats.h"
#include "collectors/disk/iostat.h"
#include "common/file_tree.h"
#include "daemon/sampling/derived_series.h"
#include "daemon/sampling/source_context.h"
#include "daemon/sampling/window_max.h"

namespace iowatch::daemon {
namespace {

class DiskSource final : public SampleSource {
 public:
  // Fills out.devices, out.block_devices and the two collectors' statuses.
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  struct DeviceState {
    std::string name;
    // Another device under the same name (seen when the plan is made again)
    // starts without history, as a device new to the plan does.
    collectors::DeviceIdentity identity;
    bool has_previous = false;  // false until the device's first sample
    collectors::DiskCounters previous;
    std::vector<WindowMax> windows;
  };
  // What the plan was made for: one per /proc/diskstats line, in file order.
  struct Line {
    std::string name;
    uint32_t major = 0;  // a new number under the same name is another device
    uint32_t minor = 0;
    bool extended = false;  // HasExtendedFields(): devices without them are skipped
    bool operator==(const Line&) const = default;
  };
  static constexpr size_t kSkip = static_cast<size_t>(-1);

  // Walks sysfs again when the diskstats lines changed (hotplug), on the
  // first run, after new options or a failed walk; the sysfs collector's status.
  CollectorStatus DiscoverIfNeeded(const collectors::Diskstats& diskstats, const FileTree& sysfs,
                                   const SourceContext& context);
  // Each planned device's counters, rates and window maxima into `out`.
  void DeriveDevices(const collectors::Diskstats& diskstats, uint64_t interval_cs,
                     const SourceContext& context, Snapshot& out);
  bool LinesChanged(const collectors::Diskstats& diskstats) const;
  // Assigns the wanted lines their state slots (sorted by name, keeping the
  // history of devices that stay) and keeps the wanted devices' entries of
  // `discovered` (every block device in sysfs).
  void Plan(const collectors::Diskstats& diskstats,
            const std::vector<collectors::BlockDevice>& discovered, const SamplerOptions& options);

  std::optional<uint64_t> previous_uptime_cs_;
  std::vector<DeviceState> devices_;  // wanted devices, sorted by name
  std::vector<Line> lines_;           // /proc/diskstats as of the plan
  std::vector<size_t> slots_;         // per line: index into devices_, or kSkip
  // The options the plan was made for: new ones (a reload) plan again.
  std::shared_ptr<const SamplerOptions> planned_for_;
  // The wanted devices' sysfs information, shared by every snapshot until
  // the plan changes. Unwanted devices' is not kept: a filter change walks
  // sysfs again.
  std::shared_ptr<const std::vector<collectors::BlockDevice>> block_devices_;
  bool discovery_ok_ = false;
  ParseErrorCount parse_errors_;
  KeptFiles kept_;  // diskstats, uptime
};

}  // namespace
namespace {

bool Wanted(const collectors::BlockDevice* device, const std::string& name,
            const SamplerOptions& options) {
  if (device != nullptr && device->is_partition && !options.partitions) return false;
  return options.filter.Matches(name);
}

}  // namespace

bool DiskSource::LinesChanged(const collectors::Diskstats& diskstats) const {
  if (diskstats.disks.size() != lines_.size()) return true;
  for (size_t i = 0; i < lines_.size(); ++i) {
    const collectors::DiskStat& disk = diskstats.disks[i];
    const Line line{disk.name, disk.major, disk.minor, disk.counters.HasExtendedFields()};
    if (line != lines_[i]) return true;
  }
  return false;
}

void DiskSource::Plan(const collectors::Diskstats& diskstats,
                      const std::vector<collectors::BlockDevice>& discovered,
                      const SamplerOptions& options) {
  std::map<std::string_view, const collectors::BlockDevice*> info;
  for (const collectors::BlockDevice& b : discovered) info.emplace(b.name, &b);
  std::map<std::string_view, size_t> wanted;  // name -> line
  lines_.clear();
  for (size_t i = 0; i < diskstats.disks.size(); ++i) {
    const collectors::DiskStat& disk = diskstats.disks[i];
    lines_.push_back({disk.name, disk.major, disk.minor, disk.counters.HasExtendedFields()});
    const auto found = info.find(disk.name);
    const collectors::BlockDevice* device = found == info.end() ? nullptr : found->second;
    if (lines_.back().extended && Wanted(device, disk.name, options)) wanted.emplace(disk.name, i);
  }
  // Devices that stay keep their previous counters and window maxima.
  std::map<std::string, DeviceState, std::less<>> old;
  for (DeviceState& state : devices_) old.emplace(state.name, std::move(state));
  devices_.clear();
  slots_.assign(lines_.size(), kSkip);
  auto exported = std::make_shared<std::vector<collectors::BlockDevice>>();
  for (const auto& [name, line] : wanted) {  // by name: the snapshot's order
    slots_[line] = devices_.size();
    const auto found = info.find(name);
    collectors::DeviceIdentity identity;
    if (found != info.end()) {
      identity = collectors::DeviceIdentityOf(*found->second);
    } else {  // without sysfs, the numbers diskstats gave
      identity.major = diskstats.disks[line].major;
      identity.minor = diskstats.disks[line].minor;
    }
    const auto kept = old.find(name);
    if (kept != old.end() && collectors::SameDevice(kept->second.identity, identity)) {
      devices_.push_back(std::move(kept->second));
      devices_.back().identity = std::move(identity);
    } else {
      devices_.push_back(DeviceState{std::string(name), std::move(identity), false, {}, {}});
    }
    if (found != info.end()) exported->push_back(*found->second);
  }
  block_devices_ = std::move(exported);
}

void DiskSource::Collect(const FileTree& procfs, const FileTree& sysfs,
                         const SourceContext& context, Snapshot& out) {
  const double start = context.now();
  // Without uptime the counters are still exported; only the rates, which
  // need the interval, are not.
  auto sample =
      collectors::ReadDiskSample(procfs.Keeping(kept_), collectors::UptimeNeed::kOptional);
  CollectorStatus status{"diskstats", 0, sample.has_value(), 0, {}, {}};
  if (!sample) status.error = sample.error().ToString();
  if (sample && sample->uptime_error) {
    status.success = false;
    status.error = sample->uptime_error->ToString() +
                   " (the counters are exported; the iostat series, which need the interval, "
                   "are not)";
  }
  if (sample) {
    const collectors::Diskstats& diskstats = sample->diskstats;
    parse_errors_.Count(diskstats.skipped, status);
    CollectorStatus discovery = DiscoverIfNeeded(diskstats, sysfs, context);
    const std::optional<uint64_t> uptime_cs =
        sample->uptime_error ? std::nullopt : std::optional<uint64_t>(sample->uptime_cs);
    const uint64_t interval_cs =
        previous_uptime_cs_ && uptime_cs && *uptime_cs > *previous_uptime_cs_
            ? *uptime_cs - *previous_uptime_cs_
            : 0;
    DeriveDevices(diskstats, interval_cs, context, out);
    if (block_devices_) out.block_devices = block_devices_;
    previous_uptime_cs_ = uptime_cs;
    discovery.parse_errors_total = parse_errors_["sysfs"];
    out.collectors.push_back(discovery);
  }
  status.duration_seconds = context.now() - start;
  status.parse_errors_total = parse_errors_["diskstats"];
  out.collectors.push_back(status);
}

CollectorStatus DiskSource::DiscoverIfNeeded(const collectors::Diskstats& diskstats,
                                             const FileTree& sysfs, const SourceContext& context) {
  if (!LinesChanged(diskstats) && planned_for_ == context.options && discovery_ok_) {
    return {"sysfs", 0, discovery_ok_, 0, {}, {}};
  }
  const double discovery_start = context.now();
  auto devices = collectors::DiscoverBlockDevices(sysfs);
  discovery_ok_ = devices.has_value();
  if (devices) {
    parse_errors_["sysfs"] += static_cast<uint64_t>(
        std::ranges::count(*devices, true, &collectors::BlockDevice::malformed_dev));
  }
  CollectorStatus discovery{"sysfs", context.now() - discovery_start, discovery_ok_, 0, {}, {}};
  Plan(diskstats, devices ? *devices : std::vector<collectors::BlockDevice>(), *context.options);
  planned_for_ = context.options;
  return discovery;
}

void DiskSource::DeriveDevices(const collectors::Diskstats& diskstats, uint64_t interval_cs,
                               const SourceContext& context, Snapshot& out) {
  const auto table = IostatSeriesTable();
  out.devices.resize(devices_.size());
  for (size_t line = 0; line < diskstats.disks.size(); ++line) {
    if (slots_[line] == kSkip) continue;
    const collectors::DiskCounters& counters = diskstats.disks[line].counters;
    DeviceState& state = devices_[slots_[line]];
    DeviceSnapshot& device = out.devices[slots_[line]];
    device.name = state.name;
    device.counters = counters;
    if (state.windows.size() != table.size()) state.windows.assign(table.size(), WindowMax());
    if (state.has_previous && interval_cs > 0) {
      const collectors::IostatRow row =
          collectors::ComputeIostat(state.previous, counters, interval_cs);
      device.has_rates = true;
      device.counters_reset = row.counters_reset;
      device.latest.reserve(table.size());
      device.window_max.reserve(table.size());
      for (size_t i = 0; i < table.size(); ++i) {
        const double value = table[i].value(row);
        state.windows[i].Push(context.tick, value, context.window_samples);
        device.latest.push_back(value);
        device.window_max.push_back(state.windows[i].Max());
      }
    }
    state.previous = counters;
    state.has_previous = true;
  }
}

const SourceDescriptor& DiskSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"sysfs", "diskstats"};
  static constexpr SourceDescriptor kDescriptor =
      Registered<DiskSource, &Snapshot::devices, &Snapshot::block_devices>({
          .name = "disk",
          .reads = "<procfs>/diskstats each sample; <sysfs>/block/* when the devices change",
          .collectors = kCollectors,
          .add_families = AddDiskFamilies,
          .discovers_devices = true,
      });
  return kDescriptor;
}

}  // namespace iowatch::daemon
