#include "daemon/sources/md/md_source.h"

#include <string>
#include <utility>
#include <vector>

#include "collectors/md/md_sysfs.h"
#include "collectors/md/mdstat.h"
#include "common/file_tree.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"

namespace iowatch::daemon {
namespace {

class MdSource final : public SampleSource {
 public:
  // Fills out.md and appends the "mdstat" and "md_sysfs" collectors' status.
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  KeptFiles kept_;  // mdstat
};

}  // namespace

void MdSource::Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
                       Snapshot& out) {
  double start = context.now();
  CollectorStatus mdstat = OptionalFeatureStatus(
      "mdstat", "no md arrays", collectors::ReadMdstat(procfs.Keeping(kept_)), out.md.arrays);
  mdstat.duration_seconds = context.now() - start;
  out.collectors.push_back(std::move(mdstat));

  start = context.now();
  CollectorStatus md_sysfs = OptionalFeatureStatus(
      "md_sysfs", "no md arrays", collectors::ReadMdSysfsArrays(sysfs), out.md.sysfs_arrays);
  md_sysfs.duration_seconds = context.now() - start;
  out.collectors.push_back(std::move(md_sysfs));
}

const SourceDescriptor& MdSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"mdstat", "md_sysfs"};
  static constexpr SourceDescriptor kDescriptor = Registered<MdSource, &Snapshot::md>({
      .name = "md",
      .reads = "<procfs>/mdstat and <sysfs>/block/md*/md/, each sample",
      .collectors = kCollectors,
      .add_families = AddMdFamilies,
  });
  return kDescriptor;
}

}  // namespace iowatch::daemon
