#include "daemon/sampler.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "collectors/block_devices.h"
#include "collectors/disk_sample.h"
#include "collectors/iostat.h"
#include "collectors/proc_vmstat.h"
#include "daemon/derived_series.h"

namespace iowatch::daemon {
namespace {

std::vector<std::string> NamesOf(const collectors::Diskstats& diskstats) {
  std::vector<std::string> names;
  names.reserve(diskstats.disks.size());
  for (const auto& d : diskstats.disks) names.push_back(d.name);
  std::sort(names.begin(), names.end());
  return names;
}

const collectors::BlockDevice* FindDevice(const std::vector<collectors::BlockDevice>& devices,
                                          const std::string& name) {
  // Discovery returns names sorted ("cciss!c0d0" spelled as the kernel does in diskstats).
  const auto it = std::lower_bound(
      devices.begin(), devices.end(), name,
      [](const collectors::BlockDevice& d, const std::string& n) { return d.name < n; });
  return it != devices.end() && it->name == name ? &*it : nullptr;
}

}  // namespace

Sampler::Sampler(SamplerOptions options) : options_(std::move(options)) {}

void Sampler::Reconfigure(SamplerOptions options) { options_ = std::move(options); }

double Sampler::Now() const {
  if (options_.monotonic_seconds) return options_.monotonic_seconds();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

uint64_t Sampler::WindowSamples() const {
  const double samples = std::ceil(options_.window_seconds / options_.interval_seconds);
  return samples < 1 ? 1 : static_cast<uint64_t>(samples);
}

bool Sampler::Wanted(const collectors::BlockDevice* device, const std::string& name) const {
  if (device != nullptr && device->is_partition && !options_.partitions) return false;
  return options_.filter.Matches(name);
}

std::shared_ptr<const Snapshot> Sampler::Collect(const collectors::FileTree& procfs,
                                                 const collectors::FileTree& sysfs,
                                                 double now_seconds) {
  ++tick_;
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->sequence = tick_;
  snapshot->timestamp_seconds = now_seconds;
  snapshot->interval_seconds = options_.interval_seconds;
  snapshot->window_seconds = options_.window_seconds;
  snapshot->user_hz = options_.user_hz;
  CollectDisks(procfs, sysfs, *snapshot);
  CollectVm(procfs, *snapshot);
  return snapshot;
}

void Sampler::CollectDisks(const collectors::FileTree& procfs, const collectors::FileTree& sysfs,
                           Snapshot& out) {
  const double start = Now();
  auto sample = collectors::ReadDiskSample(procfs);
  CollectorStatus status{"diskstats", 0, sample.has_value(), 0};
  last_interval_seconds_ = 0;
  if (sample) {
    parse_errors_["diskstats"] += sample->diskstats.skipped.size();
    const std::vector<std::string> names = NamesOf(sample->diskstats);
    CollectorStatus discovery{"sysfs", 0, discovery_ok_, 0};
    if (names != known_names_ || !discovery_ok_) {  // hotplug (or first run): walk sysfs again
      const double discovery_start = Now();
      auto devices = collectors::DiscoverBlockDevices(sysfs);
      discovery_ok_ = devices.has_value();
      block_devices_ = devices ? std::move(*devices) : std::vector<collectors::BlockDevice>();
      known_names_ = names;
      discovery = {"sysfs", Now() - discovery_start, discovery_ok_, 0};
    }
    const uint64_t interval_cs = previous_uptime_cs_ && sample->uptime_cs > *previous_uptime_cs_
                                     ? sample->uptime_cs - *previous_uptime_cs_
                                     : 0;
    const auto table = IostatSeriesTable();
    std::map<std::string, DeviceState, std::less<>> next;
    for (const collectors::DiskStat& disk : sample->diskstats.disks) {
      if (!disk.counters.HasExtendedFields()) continue;
      const collectors::BlockDevice* info = FindDevice(block_devices_, disk.name);
      if (!Wanted(info, disk.name)) continue;
      auto node = devices_.extract(disk.name);
      DeviceState state = node.empty() ? DeviceState{} : std::move(node.mapped());
      if (state.windows.size() != table.size()) state.windows.assign(table.size(), WindowMax());
      DeviceSnapshot device{disk.name, disk.counters, false, false, {}, {}};
      if (!node.empty() && interval_cs > 0) {
        const collectors::IostatRow row =
            collectors::ComputeIostat(state.previous, disk.counters, interval_cs);
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
      state.previous = disk.counters;
      next.emplace(disk.name, std::move(state));
      out.devices.push_back(std::move(device));
      if (info != nullptr) out.block_devices.push_back(*info);
    }
    devices_ = std::move(next);  // vanished devices drop out here: no stale series
    previous_uptime_cs_ = sample->uptime_cs;
    last_interval_seconds_ = static_cast<double>(interval_cs) / 100;
    std::sort(out.devices.begin(), out.devices.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    std::sort(out.block_devices.begin(), out.block_devices.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    discovery.parse_errors_total = parse_errors_["sysfs"];
    out.collectors.push_back(discovery);
  }
  status.duration_seconds = Now() - start;
  status.parse_errors_total = parse_errors_["diskstats"];
  out.collectors.push_back(status);
}

void Sampler::CollectVm(const collectors::FileTree& procfs, Snapshot& out) {
  // One status per file, so an alert can say which source broke.
  const auto timed_read = [&](const char* name, auto parse) {
    const double start = Now();
    auto text = procfs.Read(name);
    bool ok = text.has_value();
    if (ok) ok = parse(*text, procfs.PathOf(name).string());
    out.collectors.push_back(CollectorStatus{name, Now() - start, ok, parse_errors_[name]});
    return ok;
  };
  collectors::VmSample sample;
  const bool stat_ok = timed_read("stat", [&](const std::string& text, const std::string& path) {
    auto stat = collectors::ParseProcStat(text, path);
    if (!stat) return false;
    sample.stat = *stat;
    out.stat = std::move(*stat);
    return true;
  });
  const bool meminfo_ok =
      timed_read("meminfo", [&](const std::string& text, const std::string& path) {
        auto meminfo = collectors::ParseMeminfo(text, path);
        parse_errors_["meminfo"] += meminfo.values.skipped.size();
        sample.meminfo = meminfo.values;
        out.meminfo = std::move(meminfo);
        return true;
      });
  const bool vmstat_ok =
      timed_read("vmstat", [&](const std::string& text, const std::string& path) {
        auto vmstat = collectors::ParseProcVmstat(text, path);
        parse_errors_["vmstat"] += vmstat.skipped.size();
        sample.vmstat = vmstat;
        out.vmstat = std::move(vmstat);
        return true;
      });
  if (!(stat_ok && meminfo_ok && vmstat_ok)) {
    previous_vm_.reset();
    return;
  }
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
