#include "daemon/iostat_command.h"

#include <cstdio>
#include <cstdlib>

#include "collectors/disk_sample.h"
#include "collectors/iostat_report.h"
#include "collectors/proc_stat.h"
#include "daemon/host_info.h"
#include "daemon/iostat_format.h"
#include "daemon/iostat_options.h"
#include "daemon/local_time.h"
#include "daemon/sleeper.h"

namespace iowatch::daemon {
namespace {

using collectors::FileTree;

// Everything one iostat report is computed from, read in sysstat's order:
// uptime, /proc/stat, then the disks.
struct IostatSample {
  collectors::DiskSample disks;
  collectors::CpuTicks cpu;
  collectors::BlockTopology topology;
};

Result<IostatSample> ReadSample(const FileTree& procfs, const FileTree& sysfs) {
  IostatSample sample;
  auto stat_text = procfs.Read("stat");
  if (!stat_text) return std::unexpected(stat_text.error());
  auto stat = collectors::ParseProcStat(*stat_text, procfs.PathOf("stat").string());
  if (!stat) return std::unexpected(stat.error());
  sample.cpu = stat->total;
  auto disks = collectors::ReadDiskSample(procfs);
  if (!disks) return std::unexpected(disks.error());
  sample.disks = std::move(*disks);
  auto topology = collectors::ReadBlockTopology(sysfs);
  if (!topology) return std::unexpected(topology.error());
  sample.topology = std::move(*topology);
  return sample;
}

collectors::IostatSelection SelectionFrom(const IostatOptions& opts) {
  collectors::IostatSelection sel;
  sel.extended = opts.extended;
  sel.omit_inactive = opts.omit_inactive;
  sel.all_keyword = opts.all_devices;
  sel.names = opts.devices;
  if (opts.partitions && opts.partition_devices.empty()) {
    sel.set = collectors::DeviceSet::kAllLines;
    sel.hide_never_used = !opts.partitions_all;  // a bare -p keeps hiding never-used devices
  } else {
    if (opts.partitions) {
      sel.set = collectors::DeviceSet::kPartitionsOfNamed;
      sel.names.insert(sel.names.end(), opts.partition_devices.begin(),
                       opts.partition_devices.end());
    }
    sel.hide_never_used = sel.names.empty() && !opts.all_devices;
  }
  return sel;
}

IostatLayout LayoutFrom(const IostatOptions& opts) {
  IostatLayout layout;
  layout.extended = opts.extended;
  layout.show_cpu = opts.show_cpu;
  layout.show_devices = opts.show_devices;
  if (opts.unit) {
    layout.unit = *opts.unit == SizeUnit::kMegabytes ? IostatUnit::kMegabytes : IostatUnit::kKilobytes;
  } else {
    // sysstat reports 512-byte blocks when POSIXLY_CORRECT is set and no unit is asked for.
    layout.unit = std::getenv("POSIXLY_CORRECT") != nullptr ? IostatUnit::kSectors
                                                           : IostatUnit::kKilobytes;
  }
  return layout;
}

bool IsoTime() {
  const char* format = std::getenv("S_TIME_FORMAT");
  return format != nullptr && std::string_view(format) == "ISO";
}

IostatReport MakeReport(const IostatSample* prev, const IostatSample& cur,
                        const collectors::IostatSelection& sel, const IostatOptions& opts) {
  IostatReport report;
  if (opts.timestamp) report.timestamp = FormatNow(IsoTime() ? "%FT%T%z" : "%x %X");
  report.cpu = collectors::ComputeCpuUsage(prev ? prev->cpu : collectors::CpuTicks{}, cur.cpu);
  report.devices = collectors::BuildIostatRows(prev ? &prev->disks : nullptr, cur.disks,
                                               cur.topology, sel);
  for (const auto& device : report.devices) {
    const auto dm = cur.topology.dm_names.find(device.name);
    report.display_names.push_back(opts.dm_names && dm != cur.topology.dm_names.end() ? dm->second
                                                                                      : device.name);
  }
  return report;
}

void Write(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

void WarnSkippedLines(const IostatSample& sample) {
  for (const Error& e : sample.disks.diskstats.skipped) {
    std::fprintf(stderr, "iowatch iostat: %s (line skipped)\n", e.ToString().c_str());
  }
}

}  // namespace

int RunIostat(const GlobalOptions& global, const std::vector<std::string>& args) {
  auto opts = ParseIostatArgs(args);
  if (!opts) {
    std::fprintf(stderr, "iowatch iostat: %s\n", opts.error().ToString().c_str());
    return 2;
  }
  const FileTree procfs(global.procfs);
  const FileTree sysfs(global.sysfs);
  const IostatLayout layout = LayoutFrom(*opts);
  const collectors::IostatSelection selection = SelectionFrom(*opts);
  const HostInfo host = ReadHostInfo(sysfs);
  const std::string date = FormatNow(IsoTime() ? "%Y-%m-%d" : "%x");

  IostatTextFormatter text(layout);
  IostatJsonFormatter json(layout);
  const auto fail = [](const Error& e) {
    std::fprintf(stderr, "iowatch iostat: %s\n", e.ToString().c_str());
    return 2;
  };
  auto first = ReadSample(procfs, sysfs);
  if (!first) return fail(first.error());
  WarnSkippedLines(*first);
  Write(opts->json ? json.Begin(host, date) : text.Banner(host, date) + "\n");

  const bool skip_first = opts->skip_since_boot && opts->interval_s.has_value();
  long printed = 0;
  if (skip_first) {
    Write("\n");  // sysstat prints the empty separator of the report it skips
  } else {
    Write(opts->json ? json.Report(MakeReport(nullptr, *first, selection, *opts))
                     : text.Report(MakeReport(nullptr, *first, selection, *opts)));
    ++printed;
  }
  if (opts->interval_s) {
    IntervalSleeper sleeper{std::chrono::seconds(*opts->interval_s)};
    IostatSample prev = std::move(*first);
    while (!opts->count || printed < *opts->count) {
      if (!sleeper.SleepUntilNext()) break;
      auto cur = ReadSample(procfs, sysfs);
      if (!cur) {
        if (opts->json) Write(json.End());
        return fail(cur.error());
      }
      const IostatReport report = MakeReport(&prev, *cur, selection, *opts);
      Write(opts->json ? json.Report(report) : text.Report(report));
      ++printed;
      prev = std::move(*cur);
    }
  }
  if (opts->json) Write(json.End());
  return 0;
}

}  // namespace iowatch::daemon
