// VmSource: /proc/stat, /proc/meminfo and /proc/vmstat each sample, into the
// snapshot's raw tables and the vmstat series (rates over the interval
// /proc/uptime measures, as for the disks) with their window maxima. One
// collector per file ("stat", "meminfo", "vmstat"), so an alert can say
// which file broke and the log why.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "collectors/vmstat.h"
#include "common/file_tree.h"
#include "daemon/sampling/sample_source.h"
#include "daemon/sampling/source_context.h"
#include "daemon/sampling/window_max.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& VmSourceDescriptor();

// The families it renders (vm_families.cc).
void AddVmFamilies(TableBuilder& t);

class VmSource : public SampleSource {
 public:
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  // The vmstat rates and window maxima from the previous sample to `sample`.
  void DeriveVmRates(collectors::VmSample sample, uint64_t uptime_cs, const SourceContext& context,
                     Snapshot& out);

  std::optional<collectors::VmSample> previous_vm_;
  uint64_t previous_uptime_cs_ = 0;
  std::vector<WindowMax> vm_windows_;
  ParseErrorCount parse_errors_;
};

}  // namespace iowatch::daemon
