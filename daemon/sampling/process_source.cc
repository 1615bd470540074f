#include "daemon/sampling/process_source.h"

#include <cmath>

#include "collectors/cgroup/cgroup_names.h"
#include "collectors/uptime.h"

namespace iowatch::daemon {
namespace {

// The first `depth` components of a cgroup path.
std::string CutToDepth(const std::string& path, size_t depth) {
  size_t at = 0;
  for (size_t level = 0; level < depth; ++level) {
    at = path.find('/', at == 0 && level == 0 ? 0 : at + 1);
    if (at == std::string::npos) return path;
  }
  return path.substr(0, at);
}

uint64_t Growth(uint64_t before, uint64_t after) { return after > before ? after - before : 0; }

}  // namespace

void ProcessSource::Read(const FileTree& procfs, const SourceContext& context) {
  const SamplerOptions& options = *context.options;
  const auto uptime = collectors::ReadUptimeCentiseconds(procfs);
  const double seconds = uptime && previous_uptime_cs_ && *uptime > *previous_uptime_cs_
                             ? static_cast<double>(*uptime - *previous_uptime_cs_) / 100
                             : 0;
  collectors::ProcessIoReading reading = collectors::ReadProcessIo(procfs);
  std::map<std::string, collectors::ProcessIo, std::less<>> grown;  // this interval, by cgroup
  const bool first = !previous_uptime_cs_;
  for (const auto& [pid, process] : reading.by_pid) {
    const auto before = previous_.find(pid);
    // New since the last reading (a pid not seen, or seen in another cgroup or
    // with counters that went back: another process), it started since: all of
    // its I/O is growth. At the first reading nothing is.
    const bool same = before != previous_.end() && before->second.cgroup == process.cgroup &&
                      process.io.read_bytes >= before->second.io.read_bytes &&
                      process.io.write_bytes >= before->second.io.write_bytes;
    if (first) continue;
    const collectors::ProcessIo base = same ? before->second.io : collectors::ProcessIo{};
    const std::string cgroup = CutToDepth(process.cgroup, options.cgroups.max_depth);
    if (!options.cgroups.filter.Matches(cgroup)) continue;
    collectors::ProcessIo& g = grown[cgroup];
    g.read_bytes += Growth(base.read_bytes, process.io.read_bytes);
    g.write_bytes += Growth(base.write_bytes, process.io.write_bytes);
    g.cancelled_write_bytes += Growth(base.cancelled_write_bytes, process.io.cancelled_write_bytes);
  }
  for (const auto& [cgroup, g] : grown) {
    if (!totals_.contains(cgroup) && totals_.size() >= options.cgroups.max_pairs) continue;
    Totals& t = totals_[cgroup];
    t.unit = collectors::UnitOf(cgroup);
    t.read_bytes += g.read_bytes;
    t.write_bytes += g.write_bytes;
    t.cancelled_write_bytes += g.cancelled_write_bytes;
  }
  last_ = {};
  last_.unreadable = reading.unreadable;
  for (const auto& [cgroup, t] : totals_) {
    ProcessIoSeries series{
        cgroup, t.unit, t.read_bytes, t.write_bytes, t.cancelled_write_bytes, seconds > 0, 0, 0};
    if (const auto g = grown.find(cgroup); g != grown.end() && seconds > 0) {
      series.read_bytes_per_second = static_cast<double>(g->second.read_bytes) / seconds;
      series.write_bytes_per_second = static_cast<double>(g->second.write_bytes) / seconds;
    }
    last_.series.push_back(std::move(series));
  }
  previous_ = std::move(reading.by_pid);
  previous_uptime_cs_ = uptime ? std::optional<uint64_t>(*uptime) : std::nullopt;
}

void ProcessSource::Collect(const FileTree& procfs, const SourceContext& context, Snapshot& out) {
  const SamplerOptions& options = *context.options;
  if (!options.cgroups.enabled || options.process_interval_seconds <= 0) return;
  const auto every = static_cast<uint64_t>(
      std::max(1.0, std::round(options.process_interval_seconds / options.interval_seconds)));
  if (!last_tick_ || context.tick >= *last_tick_ + every) {
    const double start = context.now();
    Read(procfs, context);
    last_tick_ = context.tick;
    last_status_ = {"process_io", context.now() - start, true, 0, {}, {}};
  }
  out.process_io = last_;
  out.collectors.push_back(last_status_);
}

}  // namespace iowatch::daemon
