#include "daemon/sampling/sampler.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "collectors/block_devices.h"
#include "collectors/disk_sample.h"
#include "collectors/iostat.h"
#include "collectors/proc_vmstat.h"
#include "common/clock.h"
#include "daemon/sampling/derived_series.h"

namespace iowatch::daemon {

Sampler::Sampler(SamplerOptions options)
    : options_(std::move(options)), cgroups_(options_.cgroups) {}

void Sampler::Reconfigure(SamplerOptions options) {
  options_ = std::move(options);
  cgroups_.Reconfigure(options_.cgroups);
  plan_stale_ = true;
}

double Sampler::Now() const {
  return options_.monotonic_seconds ? options_.monotonic_seconds() : MonotonicSeconds();
}

uint64_t Sampler::WindowSamples() const {
  const double samples = std::ceil(options_.window_seconds / options_.interval_seconds);
  return samples < 1 ? 1 : static_cast<uint64_t>(samples);
}

bool Sampler::Wanted(const collectors::BlockDevice* device, const std::string& name) const {
  if (device != nullptr && device->is_partition && !options_.partitions) return false;
  return options_.filter.Matches(name);
}

std::shared_ptr<const Snapshot> Sampler::Collect(const FileTree& procfs, const FileTree& sysfs,
                                                 double now_seconds) {
  ++tick_;
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->sequence = tick_;
  snapshot->timestamp_seconds = now_seconds;
  snapshot->monotonic_seconds = Now();
  snapshot->interval_seconds = options_.interval_seconds;
  snapshot->window_seconds = options_.window_seconds;
  snapshot->user_hz = options_.user_hz;
  CollectDisks(procfs, sysfs, *snapshot);
  const double cgroup_start = Now();
  if (auto cgroup = cgroups_.Collect(procfs, sysfs, last_interval_seconds_, tick_, WindowSamples(),
                                     *snapshot)) {
    cgroup->duration_seconds = Now() - cgroup_start;
    snapshot->collectors.push_back(std::move(*cgroup));
  }
  CollectVm(procfs, *snapshot);
  const double pressure_start = Now();
  CollectorStatus pressure = pressure_.Collect(procfs, tick_, WindowSamples(), *snapshot);
  pressure.duration_seconds = Now() - pressure_start;
  snapshot->collectors.push_back(std::move(pressure));
  return snapshot;
}

bool Sampler::LinesChanged(const collectors::Diskstats& diskstats) const {
  if (diskstats.disks.size() != lines_.size()) return true;
  for (size_t i = 0; i < lines_.size(); ++i) {
    const collectors::DiskStat& disk = diskstats.disks[i];
    if (disk.name != lines_[i].name || disk.counters.HasExtendedFields() != lines_[i].extended) {
      return true;
    }
  }
  return false;
}

void Sampler::Plan(const collectors::Diskstats& diskstats,
                   const std::vector<collectors::BlockDevice>& discovered) {
  std::map<std::string_view, const collectors::BlockDevice*> info;
  for (const collectors::BlockDevice& b : discovered) info.emplace(b.name, &b);
  std::map<std::string_view, size_t> wanted;  // name -> line
  lines_.clear();
  for (size_t i = 0; i < diskstats.disks.size(); ++i) {
    const collectors::DiskStat& disk = diskstats.disks[i];
    lines_.push_back({disk.name, disk.counters.HasExtendedFields()});
    const auto found = info.find(disk.name);
    const collectors::BlockDevice* device = found == info.end() ? nullptr : found->second;
    if (lines_.back().extended && Wanted(device, disk.name)) wanted.emplace(disk.name, i);
  }
  // Devices that stay keep their previous counters and window maxima.
  std::map<std::string, DeviceState, std::less<>> old;
  for (DeviceState& state : devices_) old.emplace(state.name, std::move(state));
  devices_.clear();
  slots_.assign(lines_.size(), kSkip);
  auto exported = std::make_shared<std::vector<collectors::BlockDevice>>();
  for (const auto& [name, line] : wanted) {  // by name: the snapshot's order
    slots_[line] = devices_.size();
    const auto kept = old.find(name);
    devices_.push_back(kept == old.end() ? DeviceState{std::string(name), false, {}, {}}
                                         : std::move(kept->second));
    if (const auto found = info.find(name); found != info.end()) {
      exported->push_back(*found->second);
    }
  }
  block_devices_ = std::move(exported);
  plan_stale_ = false;
}

void Sampler::CollectDisks(const FileTree& procfs, const FileTree& sysfs, Snapshot& out) {
  const double start = Now();
  auto sample = collectors::ReadDiskSample(procfs);
  CollectorStatus status{"diskstats", 0, sample.has_value(), 0, {}, {}};
  if (!sample) status.error = sample.error().ToString();
  last_interval_seconds_ = 0;
  if (sample) {
    const collectors::Diskstats& diskstats = sample->diskstats;
    CountSkipped(diskstats.skipped, status);
    CollectorStatus discovery = DiscoverIfNeeded(diskstats, sysfs);
    const uint64_t interval_cs = previous_uptime_cs_ && sample->uptime_cs > *previous_uptime_cs_
                                     ? sample->uptime_cs - *previous_uptime_cs_
                                     : 0;
    DeriveDevices(diskstats, interval_cs, out);
    if (block_devices_) out.block_devices = block_devices_;
    previous_uptime_cs_ = sample->uptime_cs;
    last_interval_seconds_ = static_cast<double>(interval_cs) / 100;
    discovery.parse_errors_total = parse_errors_["sysfs"];
    out.collectors.push_back(discovery);
  }
  status.duration_seconds = Now() - start;
  status.parse_errors_total = parse_errors_["diskstats"];
  out.collectors.push_back(status);
}

CollectorStatus Sampler::DiscoverIfNeeded(const collectors::Diskstats& diskstats,
                                          const FileTree& sysfs) {
  if (!LinesChanged(diskstats) && !plan_stale_ && discovery_ok_) {
    return {"sysfs", 0, discovery_ok_, 0, {}, {}};
  }
  const double discovery_start = Now();
  auto devices = collectors::DiscoverBlockDevices(sysfs);
  discovery_ok_ = devices.has_value();
  if (devices) {
    parse_errors_["sysfs"] += static_cast<uint64_t>(
        std::ranges::count(*devices, true, &collectors::BlockDevice::malformed_dev));
  }
  CollectorStatus discovery{"sysfs", Now() - discovery_start, discovery_ok_, 0, {}, {}};
  Plan(diskstats, devices ? *devices : std::vector<collectors::BlockDevice>());
  return discovery;
}

void Sampler::DeriveDevices(const collectors::Diskstats& diskstats, uint64_t interval_cs,
                            Snapshot& out) {
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
        state.windows[i].Push(tick_, value, WindowSamples());
        device.latest.push_back(value);
        device.window_max.push_back(state.windows[i].Max());
      }
    }
    state.previous = counters;
    state.has_previous = true;
  }
}

void Sampler::CountSkipped(const std::vector<Error>& skipped, CollectorStatus& status) {
  parse_errors_[status.name] += skipped.size();
  if (!skipped.empty()) status.parse_error = skipped.front().ToString();
}

void Sampler::CollectVm(const FileTree& procfs, Snapshot& out) {
  // One status per file, so an alert can say which source broke and the log
  // why (CollectorStatus::error, parse_error).
  const auto timed_read = [&](const char* name, auto parse) {
    const double start = Now();
    CollectorStatus status{name, 0, false, 0, {}, {}};
    auto text = procfs.Read(name);
    const Status parsed = text ? parse(*text, procfs.PathOf(name).string(), status)
                               : Status(std::unexpected(text.error()));
    status.success = parsed.has_value();
    if (!parsed) status.error = parsed.error().ToString();
    status.duration_seconds = Now() - start;
    status.parse_errors_total = parse_errors_[name];
    out.collectors.push_back(std::move(status));
    return parsed.has_value();
  };
  collectors::VmSample sample;
  const bool stat_ok = timed_read(
      "stat", [&](const std::string& text, const std::string& path, CollectorStatus&) -> Status {
        auto stat = collectors::ParseProcStat(text, path);
        if (!stat) return std::unexpected(stat.error());
        sample.stat = *stat;
        out.stat = std::move(*stat);
        return {};
      });
  const bool meminfo_ok = timed_read(
      "meminfo",
      [&](const std::string& text, const std::string& path, CollectorStatus& status) -> Status {
        auto meminfo = collectors::ParseMeminfo(text, path);
        CountSkipped(meminfo.values.skipped, status);
        Status usable = collectors::CheckMeminfoUsable(meminfo, path);
        sample.meminfo = meminfo.values;
        out.meminfo = std::move(meminfo);
        return usable;
      });
  const bool vmstat_ok = timed_read(
      "vmstat",
      [&](const std::string& text, const std::string& path, CollectorStatus& status) -> Status {
        auto vmstat = collectors::ParseProcVmstat(text, path);
        CountSkipped(vmstat.skipped, status);
        sample.vmstat = vmstat;
        out.vmstat = std::move(vmstat);
        return {};
      });
  if (!(stat_ok && meminfo_ok && vmstat_ok)) {
    previous_vm_.reset();
    return;
  }
  DeriveVmRates(std::move(sample), out);
}

void Sampler::DeriveVmRates(collectors::VmSample sample, Snapshot& out) {
  const auto table = VmstatSeriesTable();
  if (previous_vm_) {
    // The interval measured by /proc/uptime (as for the disks), else the nominal one.
    const double elapsed =
        last_interval_seconds_ > 0 ? last_interval_seconds_ : options_.interval_seconds;
    const collectors::VmstatRates rates =
        collectors::ComputeVmstatRates(*previous_vm_, sample, elapsed, options_.page_bytes);
    if (vm_windows_.size() != table.size()) vm_windows_.assign(table.size(), WindowMax());
    out.has_vm_rates = true;
    for (size_t i = 0; i < table.size(); ++i) {
      const double value = table[i].value(rates);
      vm_windows_[i].Push(tick_, value, WindowSamples());
      out.vm_latest.push_back(value);
      out.vm_window_max.push_back(vm_windows_[i].Max());
    }
  }
  previous_vm_ = std::move(sample);
}

}  // namespace iowatch::daemon
