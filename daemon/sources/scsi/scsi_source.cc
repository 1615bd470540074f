#include "daemon/sources/scsi/scsi_source.h"

#include <map>
#include <string>

#include "collectors/scsi/scsi_counters.h"
#include "common/file_tree.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"

namespace iowatch::daemon {
namespace {

// The source's one setting (daemon/sources/scsi/iowatch.yaml documents it).
constexpr auto kEnabled = config::BoolSetting("collectors.scsi.enabled", "true");
constexpr config::Setting kSettings[] = {kEnabled};

class ScsiSource final : public SampleSource {
 public:
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  // One disk's counters, each extended past its wrap, and which device they
  // are of: another under the same name has counters of its own, from 0.
  struct Extenders {
    collectors::DeviceIdentity identity;
    collectors::ScsiCounterExtender requests, done, errors, timeouts;
  };
  std::map<std::string, Extenders, std::less<>> disks_;
};

}  // namespace

void ScsiSource::Collect(const FileTree& /*procfs*/, const FileTree& sysfs,
                         const SourceContext& context, Snapshot& out) {
  if (!context.options->settings.Get<bool>(kEnabled)) {
    disks_.clear();  // switched on again, the counters start over
    return;
  }
  const double start = context.now();
  CollectorStatus status{"scsi", 0, true, 0, {}, {}};
  std::map<std::string, Extenders, std::less<>> seen;
  for (const collectors::BlockDevice& d : *context.devices) {
    if (d.is_partition || d.transport != "scsi") continue;
    const auto counters = collectors::ReadScsiCounters(sysfs, d.name);
    if (!counters) {
      // An optical drive or an enclosure has none; a disk with unreadable ones fails.
      if (counters.error().code == ErrorCode::kNotFound) continue;
      if (status.success) status.error = counters.error().ToString();
      status.success = false;
      continue;
    }
    // A disk that went and came back, or another in its place, starts again.
    // diskseq is read now: the devices are discovered again only when the
    // diskstats lines change, and a disk swapped between two samples leaves
    // them as they were.
    collectors::DeviceIdentity identity = collectors::DeviceIdentityOf(d);
    identity.diskseq = collectors::ReadDiskseq(sysfs, d);
    auto node = disks_.extract(d.name);
    if (node && !collectors::SameDevice(node.mapped().identity, identity)) node = {};
    Extenders& e = node ? seen.insert(std::move(node)).position->second : seen[d.name];
    e.identity = std::move(identity);
    ScsiSeries series{d.name,
                      e.requests.Extend(counters->requests),
                      e.done.Extend(counters->done),
                      e.errors.Extend(counters->errors),
                      {}};
    if (counters->timeouts) series.timeouts = e.timeouts.Extend(*counters->timeouts);
    out.scsi.devices.push_back(std::move(series));
  }
  disks_ = std::move(seen);  // disks gone are forgotten
  status.duration_seconds = context.now() - start;
  out.collectors.push_back(std::move(status));
}

const SourceDescriptor& ScsiSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"scsi"};
  static constexpr SourceDescriptor kDescriptor = Registered<ScsiSource, &Snapshot::scsi>({
      .name = "scsi",
      .reads = "<sysfs>/block/DISK/device/{iorequest,iodone,ioerr,iotmo}_cnt and "
               "<sysfs>/block/DISK/diskseq of SCSI disks, each sample",
      .collectors = kCollectors,
      .config_switch = kEnabled.key,
      .settings = kSettings,
      .enabled = [](const SamplerOptions& o) { return o.settings.Get<bool>(kEnabled); },
      .add_families = AddScsiFamilies,
  });
  return kDescriptor;
}

}  // namespace iowatch::daemon
