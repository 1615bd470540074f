#include "cli/iostat/iostat_session.h"

#include <algorithm>

namespace iowatch::daemon {
namespace {

IostatSelection SelectionFrom(const IostatOptions& opts) {
  IostatSelection sel;
  sel.extended = opts.extended;
  sel.omit_inactive = opts.omit_inactive;
  sel.all_keyword = opts.all_devices;
  sel.names = opts.devices;
  if (opts.partitions && opts.partition_devices.empty()) {
    sel.set = DeviceSet::kAllLines;
    sel.hide_never_used = !opts.partitions_all;  // a bare -p keeps hiding never-used devices
  } else {
    if (opts.partitions) {
      sel.set = DeviceSet::kPartitionsOfNamed;
      sel.names.insert(sel.names.end(), opts.partition_devices.begin(),
                       opts.partition_devices.end());
    }
    sel.hide_never_used = sel.names.empty() && !opts.all_devices;
  }
  return sel;
}

IostatLayout LayoutFrom(const IostatOptions& opts, bool posixly_correct) {
  IostatLayout layout;
  layout.extended = opts.extended;
  layout.show_cpu = opts.show_cpu;
  layout.show_devices = opts.show_devices;
  if (opts.unit) {
    layout.unit =
        *opts.unit == SizeUnit::kMegabytes ? IostatUnit::kMegabytes : IostatUnit::kKilobytes;
  } else {
    // sysstat reports 512-byte blocks when POSIXLY_CORRECT is set and no unit is asked for.
    layout.unit = posixly_correct ? IostatUnit::kSectors : IostatUnit::kKilobytes;
  }
  return layout;
}

bool SameDevices(const collectors::Diskstats& a, const collectors::Diskstats& b) {
  return std::equal(a.disks.begin(), a.disks.end(), b.disks.begin(), b.disks.end(),
                    [](const auto& x, const auto& y) { return x.name == y.name; });
}

}  // namespace

Result<IostatSample> ReadIostatSample(const FileTree& procfs, const FileTree& sysfs,
                                      const IostatSample* previous) {
  IostatSample sample;
  auto stat_text = procfs.Read("stat");
  if (!stat_text) return ErrorOf(stat_text);
  auto stat = collectors::ParseProcStat(*stat_text, procfs.PathOf("stat").string());
  if (!stat) return ErrorOf(stat);
  sample.cpu = stat->total;
  auto disks = collectors::ReadDiskSample(procfs);
  if (!disks) return ErrorOf(disks);
  sample.disks = std::move(*disks);
  if (previous != nullptr && SameDevices(previous->disks.diskstats, sample.disks.diskstats)) {
    sample.topology = previous->topology;
    return sample;
  }
  auto topology = collectors::ReadBlockTopology(sysfs);
  if (!topology) return ErrorOf(topology);
  sample.topology = std::move(*topology);
  return sample;
}

IostatSession::IostatSession(const IostatOptions& options, HostInfo host, TimeFormatter now,
                             bool posixly_correct, bool iso_time)
    : options_(options),
      host_(std::move(host)),
      now_(std::move(now)),
      iso_time_(iso_time),
      layout_(LayoutFrom(options, posixly_correct)),
      selection_(SelectionFrom(options)),
      text_(layout_),
      json_(layout_) {}

std::string IostatSession::Start(IostatSample first) {
  const std::string date = now_(iso_time_ ? "%Y-%m-%d" : "%x");
  std::string out = options_.json ? json_.Begin(host_, date) : text_.Banner(host_, date) + "\n";
  if (options_.skip_since_boot && options_.interval_s) {
    out += "\n";  // sysstat still prints the separator of the report it skips
  } else {
    out += Format(MakeReport(nullptr, first));
  }
  previous_ = std::move(first);
  return out;
}

std::string IostatSession::Next(IostatSample sample) {
  std::string out = Format(MakeReport(previous_ ? &*previous_ : nullptr, sample));
  previous_ = std::move(sample);
  return out;
}

std::string IostatSession::Finish() const { return options_.json ? json_.End() : std::string(); }

IostatReport IostatSession::MakeReport(const IostatSample* prev, const IostatSample& cur) const {
  IostatReport report;
  if (options_.timestamp) report.timestamp = now_(iso_time_ ? "%FT%T%z" : "%x %X");
  report.cpu = collectors::ComputeCpuUsage(prev ? prev->cpu : collectors::CpuTicks{}, cur.cpu);
  report.devices =
      BuildIostatRows(prev ? &prev->disks : nullptr, cur.disks, cur.topology, selection_);
  for (const auto& device : report.devices) {
    const auto dm = cur.topology.dm_names.find(device.name);
    const bool renamed = options_.dm_names && dm != cur.topology.dm_names.end();
    report.display_names.push_back(renamed ? dm->second : device.name);
  }
  return report;
}

std::string IostatSession::Format(const IostatReport& report) {
  return options_.json ? json_.Report(report) : text_.Report(report);
}

}  // namespace iowatch::daemon
