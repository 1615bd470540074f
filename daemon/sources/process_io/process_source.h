// ProcessSource: storage I/O per cgroup from /proc/PID/io, where the cgroup
// files cannot tell (cgroup v1 without a throttle rule): every process's
// read_bytes, write_bytes and cancelled_write_bytes (collectors/
// process_io.h), their growth since the last reading summed per cgroup of
// systemd's tree cut to cgroups.depth, as counters of what surviving
// processes did and as rates over the interval. Read every
// cgroups.process_interval (it walks every process: its cost is the
// "process_io" collector's duration); samples in between carry the last
// reading. A process is its pid and start time: one that appears between two
// readings counts all its I/O; one that moves to another cgroup counts its
// growth there, its past staying where it was counted; one that exits between
// two readings takes its last interval with it unless its parent is seen (a
// parent that reaps a child takes its counts: reaped_io.h); a process iowatch may not read
// (another user's, without ptrace-read access) is counted as unreadable,
// never guessed. Never a per-PID series. At most cgroups.max_series cgroups
// are kept: a new one takes the place of the one whose processes are all
// gone since the longest (a transient unit's series ends), and is dropped,
// counted, when every kept cgroup still has a process.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "collectors/process_io.h"
#include "common/file_tree.h"
#include "daemon/sampling/sample_source.h"
#include "daemon/sampling/source_context.h"
#include "daemon/sources/process_io/reaped_io.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& ProcessSourceDescriptor();

// The families it renders (process_families.cc).
void AddProcessFamilies(TableBuilder& t);

class ProcessSource : public SampleSource {
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
};

}  // namespace iowatch::daemon
