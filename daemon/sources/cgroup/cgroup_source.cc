#include "daemon/sources/cgroup/cgroup_source.h"

#include <fmt/format.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collectors/cgroup/cgroup_io.h"
#include "collectors/disk/block_devices.h"
#include "collectors/vm/uptime.h"
#include "common/file_tree.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"
#include "daemon/sampling/window_max.h"

namespace iowatch::daemon {
namespace {

class CgroupSource final : public SampleSource {
 public:
  // Fills out.cgroups for the devices in context.devices and appends the
  // collector's status; nothing when disabled. Rates are over the interval
  // /proc/uptime measures since the previous sample.
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  struct PairState {
    collectors::CgroupDeviceIo previous;
    std::array<WindowMax, kCgroupRateCount> windows;
    uint64_t tick = 0;  // last sample that saw the pair
  };
  void Derive(const collectors::CgroupIo& cgroup, const collectors::CgroupDeviceIo& io,
              const std::string& device, double interval_seconds, uint64_t tick,
              uint64_t window_samples, CgroupSnapshot& out);

  std::optional<collectors::CgroupLayout> layout_;
  std::optional<uint64_t> previous_uptime_cs_;
  std::map<std::string, PairState, std::less<>> pairs_;  // "cgroup\0device"
  uint64_t skipped_total_ = 0;                           // malformed cgroup files since start
  KeptFiles kept_;                                       // uptime
};

}  // namespace
namespace {

// Counter deltas, or nullopt when any went backwards (the cgroup was re-created).
std::optional<std::array<uint64_t, kCgroupRateCount>> Deltas(const collectors::CgroupDeviceIo& a,
                                                             const collectors::CgroupDeviceIo& b) {
  const uint64_t before[] = {a.read_bytes, a.write_bytes, a.reads, a.writes};
  const uint64_t after[] = {b.read_bytes, b.write_bytes, b.reads, b.writes};
  std::array<uint64_t, kCgroupRateCount> deltas{};
  for (size_t i = 0; i < kCgroupRateCount; ++i) {
    if (after[i] < before[i]) return std::nullopt;
    deltas[i] = after[i] - before[i];
  }
  return deltas;
}

}  // namespace

void CgroupSource::Derive(const collectors::CgroupIo& cgroup, const collectors::CgroupDeviceIo& io,
                          const std::string& device, double interval_seconds, uint64_t tick,
                          uint64_t window_samples, CgroupSnapshot& out) {
  CgroupSeries series{cgroup.path, cgroup.unit, device, io, false, {}, {}};
  const std::string key = cgroup.path + '\0' + device;
  auto [it, inserted] = pairs_.try_emplace(key);
  PairState& state = it->second;
  const bool continuous = !inserted && state.tick + 1 == tick;
  const auto deltas = continuous ? Deltas(state.previous, io) : std::nullopt;
  if (deltas && interval_seconds > 0) {
    series.has_rates = true;
    for (size_t i = 0; i < kCgroupRateCount; ++i) {
      series.latest[i] = static_cast<double>((*deltas)[i]) / interval_seconds;
      state.windows[i].Push(tick, series.latest[i], window_samples);
      series.window_max[i] = state.windows[i].Max();
    }
  }
  state.previous = io;
  state.tick = tick;
  out.series.push_back(std::move(series));
}

void CgroupSource::Collect(const FileTree& procfs, const FileTree& sysfs,
                           const SourceContext& context, Snapshot& out) {
  const CgroupSourceOptions& options = context.options->cgroups;
  if (!options.enabled) return;
  const double start = context.now();
  CollectorStatus status{"cgroup", 0, false, 0, {}, {}};
  if (!layout_) {
    auto layout = collectors::DetectCgroupLayout(procfs, sysfs);
    if (!layout) {
      status.error = layout.error().ToString();
      status.duration_seconds = context.now() - start;
      out.collectors.push_back(std::move(status));
      return;
    }
    layout_ = std::move(*layout);
  }
  const auto uptime = collectors::ReadUptimeCentiseconds(procfs.Keeping(kept_));
  const double interval_seconds = uptime && previous_uptime_cs_ && *uptime > *previous_uptime_cs_
                                      ? static_cast<double>(*uptime - *previous_uptime_cs_) / 100
                                      : 0;
  previous_uptime_cs_ = uptime ? std::optional<uint64_t>(*uptime) : std::nullopt;
  const uint64_t tick = context.tick;
  const uint64_t window_samples = context.window_samples;
  std::unordered_map<uint64_t, const std::string*> names;  // makedev -> kernel name
  for (const collectors::BlockDevice& d : *context.devices) {
    if (!d.malformed_dev) names.emplace(makedev(d.major, d.minor), &d.name);
  }
  collectors::CgroupSelection selection{
      options.max_depth, options.filter, options.max_pairs,
      [&](uint32_t major, uint32_t minor) { return names.contains(makedev(major, minor)); }};
  const collectors::CgroupIoScan scan = collectors::ScanCgroupIo(sysfs, *layout_, selection);
  for (const collectors::CgroupIo& cgroup : scan.cgroups) {
    std::vector<std::pair<const std::string*, const collectors::CgroupDeviceIo*>> by_name;
    by_name.reserve(cgroup.devices.size());
    for (const collectors::CgroupDeviceIo& io : cgroup.devices) {
      by_name.emplace_back(names.at(makedev(io.major, io.minor)), &io);
    }
    std::ranges::sort(by_name, {}, [](const auto& p) { return *p.first; });
    for (const auto& [name, io] : by_name) {
      Derive(cgroup, *io, *name, interval_seconds, tick, window_samples, out.cgroups);
    }
    if (cgroup.pressure)
      out.cgroups.pressure.push_back({cgroup.path, cgroup.unit, *cgroup.pressure});
  }
  std::erase_if(pairs_, [&](const auto& entry) { return entry.second.tick != tick; });
  out.cgroups.dropped_series = scan.dropped_pairs;
  status.success = true;
  skipped_total_ += scan.skipped.size();
  status.parse_errors_total = skipped_total_;
  if (!scan.skipped.empty()) status.parse_error = scan.skipped.front().ToString();
  if (scan.dropped_pairs > 0 && status.parse_error.empty()) {
    // A fixed text: the log says it once while it lasts (CollectorLog).
    status.parse_error = fmt::format(
        "cgroup x device pairs over cgroups.max_series ({}) are not exported "
        "(iowatch_cgroup_io_dropped_series says how many)",
        options.max_pairs);
  }
  status.duration_seconds = context.now() - start;
  out.collectors.push_back(std::move(status));
}

const SourceDescriptor& CgroupSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"cgroup"};
  static constexpr SourceDescriptor kDescriptor = Registered<CgroupSource, &Snapshot::cgroups>({
      .name = "cgroup",
      .reads =
          "the I/O cgroup hierarchy from <procfs>/self/mountinfo: io.stat, io.pressure (v2) or "
          "blkio.* (v1)",
      .collectors = kCollectors,
      .config_switch = "cgroups.enabled",
      .enabled = [](const SamplerOptions& o) { return o.cgroups.enabled; },
      .add_families = AddCgroupFamilies,
  });
  return kDescriptor;
}

}  // namespace iowatch::daemon
