#include "daemon/sources/process_io/process_source.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "collectors/cgroup/cgroup_names.h"
#include "collectors/process_io/process_io.h"
#include "collectors/vm/uptime.h"
#include "common/file_tree.h"
#include "daemon/sampling/source_context.h"
#include "daemon/sources/process_io/reaped_io.h"

namespace iowatch::daemon {
namespace {

class ProcessSource final : public SampleSource {
 public:
  // Fills out.process_io and appends the "process_io" collector's status;
  // nothing when disabled.
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  struct Totals {
    std::string unit;
    uint64_t read_bytes = 0, write_bytes = 0, cancelled_write_bytes = 0;
    uint64_t last_live = 0;  // the last reading that found a process in it
  };
  void Read(const FileTree& procfs, const SourceContext& context);
  // Adds a reading's growth to the totals, within max_pairs cgroups.
  void Keep(const std::map<std::string, collectors::ProcessIo, std::less<>>& grown,
            const std::set<std::string, std::less<>>& live, size_t max_pairs);
  // Removes the kept cgroup without a live process for the longest; false
  // when every kept one has a process.
  bool EvictOneGone();

  std::optional<uint64_t> last_tick_;  // the sample of the last reading
  std::optional<uint64_t> previous_uptime_cs_;
  std::map<uint32_t, collectors::ProcessIoReading::Process> previous_;
  std::map<std::string, Totals, std::less<>> totals_;  // by cgroup, since start
  ReapedIo reaped_;
  uint64_t readings_ = 0;
  uint64_t dropped_ = 0;  // cgroups with growth not kept at the last reading
  ProcessIoSnapshot last_;
  CollectorStatus last_status_{"process_io", 0, false, 0, {}, {}};
  // Each process's io, cgroup and stat, read every reading: three opens a
  // process saved (the descriptor limit's quarter at most).
  KeptFiles kept_{1024};
};

}  // namespace
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

void ProcessSource::Keep(const std::map<std::string, collectors::ProcessIo, std::less<>>& grown,
                         const std::set<std::string, std::less<>>& live, size_t max_pairs) {
  ++readings_;
  for (auto& [cgroup, t] : totals_) {
    if (live.contains(cgroup)) t.last_live = readings_;
  }
  dropped_ = 0;
  for (const auto& [cgroup, g] : grown) {
    auto it = totals_.find(cgroup);
    if (it == totals_.end()) {
      const bool idle = g == collectors::ProcessIo{};
      if (idle && totals_.size() >= max_pairs) continue;  // nothing to keep
      // Full: the cgroup whose processes are all gone since the longest
      // makes room (a transient unit's series ends); none: not kept.
      if (totals_.size() >= max_pairs && !EvictOneGone()) {
        ++dropped_;
        continue;
      }
      it = totals_.emplace(cgroup, Totals{collectors::UnitOf(cgroup), 0, 0, 0, readings_}).first;
    }
    Totals& t = it->second;
    t.read_bytes += g.read_bytes;
    t.write_bytes += g.write_bytes;
    t.cancelled_write_bytes += g.cancelled_write_bytes;
  }
}

bool ProcessSource::EvictOneGone() {
  auto oldest = totals_.end();
  for (auto it = totals_.begin(); it != totals_.end(); ++it) {
    if (it->second.last_live == readings_) continue;  // a process of it lives
    if (oldest == totals_.end() || it->second.last_live < oldest->second.last_live) oldest = it;
  }
  if (oldest == totals_.end()) return false;
  totals_.erase(oldest);
  return true;
}

void ProcessSource::Read(const FileTree& procfs, const SourceContext& context) {
  const SamplerOptions& options = *context.options;
  const auto uptime = collectors::ReadUptimeCentiseconds(procfs);
  const double seconds = uptime && previous_uptime_cs_ && *uptime > *previous_uptime_cs_
                             ? static_cast<double>(*uptime - *previous_uptime_cs_) / 100
                             : 0;
  collectors::ProcessIoReading reading = collectors::ReadProcessIo(procfs);
  std::map<std::string, collectors::ProcessIo, std::less<>> grown;  // this interval, by cgroup
  std::set<std::string, std::less<>> live;                          // cgroups with a process
  const bool first = !previous_uptime_cs_;
  reaped_.Update(previous_, reading.by_pid);
  for (const auto& [pid, process] : reading.by_pid) {
    const std::string cgroup = CutToDepth(process.cgroup, options.cgroups.max_depth);
    if (!options.cgroups.filter.Matches(cgroup)) continue;
    live.insert(cgroup);
    if (first) continue;  // at the first reading nothing is growth
    // A process not seen before started since the last reading: all of its
    // I/O is growth.
    const auto before = previous_.find(pid);
    const bool same = before != previous_.end() && ReapedIo::SameProcess(before->second, process);
    const collectors::ProcessIo base = same ? before->second.io : collectors::ProcessIo{};
    // Less the counts of its reaped children, counted while they lived.
    const collectors::ProcessIo own =
        reaped_.Pay(pid, {Growth(base.read_bytes, process.io.read_bytes),
                          Growth(base.write_bytes, process.io.write_bytes),
                          Growth(base.cancelled_write_bytes, process.io.cancelled_write_bytes)});
    collectors::ProcessIo& g = grown[cgroup];
    g.read_bytes += own.read_bytes;
    g.write_bytes += own.write_bytes;
    g.cancelled_write_bytes += own.cancelled_write_bytes;
  }
  Keep(grown, live, options.cgroups.max_pairs);
  last_ = {};
  last_.unreadable = reading.unreadable;
  last_.dropped_series = dropped_;
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

void ProcessSource::Collect(const FileTree& procfs, const FileTree& /*sysfs*/,
                            const SourceContext& context, Snapshot& out) {
  const SamplerOptions& options = *context.options;
  if (!options.cgroups.enabled || options.process_interval_seconds <= 0) return;
  const auto every = static_cast<uint64_t>(
      std::max(1.0, std::round(options.process_interval_seconds / options.interval_seconds)));
  if (!last_tick_ || context.tick >= *last_tick_ + every) {
    const double start = context.now();
    Read(procfs.Keeping(kept_), context);
    kept_.Sweep();  // the processes gone since the last reading
    last_tick_ = context.tick;
    last_status_ = {"process_io", context.now() - start, true, 0, {}, {}};
  }
  out.process_io = last_;
  out.collectors.push_back(last_status_);
}

const SourceDescriptor& ProcessSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"process_io"};
  static constexpr SourceDescriptor kDescriptor = Registered<ProcessSource, &Snapshot::process_io>({
      .name = "process_io",
      .reads = "<procfs>/PID/io and <procfs>/PID/cgroup of every process, every "
               "cgroups.process_interval",
      .collectors = kCollectors,
      .config_switch = "cgroups.process_interval",
      .enabled =
          [](const SamplerOptions& o) {
            return o.cgroups.enabled && o.process_interval_seconds > 0;
          },
      .add_families = AddProcessFamilies,
  });
  return kDescriptor;
}

}  // namespace iowatch::daemon
