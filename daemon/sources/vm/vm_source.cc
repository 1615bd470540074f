#include "daemon/sources/vm/vm_source.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "collectors/vm/proc_vmstat.h"
#include "collectors/vm/uptime.h"
#include "collectors/vm/vmstat.h"
#include "common/file_tree.h"
#include "daemon/sampling/derived_series.h"
#include "daemon/sampling/source_context.h"
#include "daemon/sampling/window_max.h"

namespace iowatch::daemon {
namespace {

class VmSource final : public SampleSource {
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
  KeptFiles kept_;  // stat, meminfo, vmstat, uptime
};

}  // namespace

void VmSource::Collect(const FileTree& given_procfs, const FileTree& /*sysfs*/,
                       const SourceContext& context, Snapshot& out) {
  const FileTree procfs = given_procfs.Keeping(kept_);
  // One status per file, so an alert can say which source broke and the log
  // why (CollectorStatus::error, parse_error).
  const auto timed_read = [&](const char* name, auto parse) {
    const double start = context.now();
    CollectorStatus status{name, 0, false, 0, {}, {}};
    auto text = procfs.Read(name);
    const Status parsed = text ? parse(*text, procfs.PathOf(name).string(), status)
                               : Status(std::unexpected(text.error()));
    status.success = parsed.has_value();
    if (!parsed) status.error = parsed.error().ToString();
    status.duration_seconds = context.now() - start;
    status.parse_errors_total = parse_errors_[name];
    out.collectors.push_back(std::move(status));
    return parsed.has_value();
  };
  collectors::VmSample sample;
  const bool stat_ok = timed_read(
      "stat", [&](const std::string& text, const std::string& path, CollectorStatus&) -> Status {
        auto stat = collectors::ParseProcStat(text, path);
        if (!stat) return ErrorOf(stat);
        sample.stat = *stat;
        out.stat = std::move(*stat);
        return {};
      });
  const bool meminfo_ok = timed_read(
      "meminfo",
      [&](const std::string& text, const std::string& path, CollectorStatus& status) -> Status {
        auto meminfo = collectors::ParseMeminfo(text, path);
        parse_errors_.Count(meminfo.values.skipped, status);
        Status usable = collectors::CheckMeminfoUsable(meminfo, path);
        sample.meminfo = meminfo.values;
        out.meminfo = std::move(meminfo);
        return usable;
      });
  const bool vmstat_ok = timed_read(
      "vmstat",
      [&](const std::string& text, const std::string& path, CollectorStatus& status) -> Status {
        auto vmstat = collectors::ParseProcVmstat(text, path);
        parse_errors_.Count(vmstat.skipped, status);
        sample.vmstat = vmstat;
        out.vmstat = std::move(vmstat);
        return {};
      });
  // The interval as the disks measure it (/proc/uptime), else the nominal one.
  const auto uptime = collectors::ReadUptimeCentiseconds(procfs);
  if (!(stat_ok && meminfo_ok && vmstat_ok && uptime)) {
    previous_vm_.reset();
    return;
  }
  DeriveVmRates(std::move(sample), *uptime, context, out);
}

void VmSource::DeriveVmRates(collectors::VmSample sample, uint64_t uptime_cs,
                             const SourceContext& context, Snapshot& out) {
  const auto table = VmstatSeriesTable();
  if (previous_vm_) {
    const double elapsed = uptime_cs > previous_uptime_cs_
                               ? static_cast<double>(uptime_cs - previous_uptime_cs_) / 100
                               : context.options->interval_seconds;
    const collectors::VmstatRates rates =
        collectors::ComputeVmstatRates(*previous_vm_, sample, elapsed, context.options->page_bytes);
    if (vm_windows_.size() != table.size()) vm_windows_.assign(table.size(), WindowMax());
    out.has_vm_rates = true;
    for (size_t i = 0; i < table.size(); ++i) {
      const double value = table[i].value(rates);
      vm_windows_[i].Push(context.tick, value, context.window_samples);
      out.vm_latest.push_back(value);
      out.vm_window_max.push_back(vm_windows_[i].Max());
    }
  }
  previous_vm_ = std::move(sample);
  previous_uptime_cs_ = uptime_cs;
}

const SourceDescriptor& VmSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"stat", "meminfo", "vmstat"};
  static constexpr SourceDescriptor kDescriptor =
      Registered<VmSource, &Snapshot::stat, &Snapshot::meminfo, &Snapshot::vmstat,
                 &Snapshot::has_vm_rates, &Snapshot::vm_latest, &Snapshot::vm_window_max>({
          .name = "vm",
          .reads = "<procfs>/stat, <procfs>/meminfo, <procfs>/vmstat",
          .collectors = kCollectors,
          .add_families = AddVmFamilies,
      });
  return kDescriptor;
}

}  // namespace iowatch::daemon
