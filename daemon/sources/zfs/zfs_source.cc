#include "daemon/sources/zfs/zfs_source.h"

#include <utility>

#include "collectors/zfs/zfs_pool.h"
#include "common/file_tree.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"

namespace iowatch::daemon {
namespace {

class ZfsSource final : public SampleSource {
 public:
  // Fills out.zfs and appends the "zfs_pool" collector's status.
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;
};

}  // namespace

void ZfsSource::Collect(const FileTree& procfs, const FileTree&, const SourceContext& context,
                        Snapshot& out) {
  const double start = context.now();
  CollectorStatus status = OptionalFeatureStatus("zfs_pool", "no ZFS pools",
                                                 collectors::ReadZfsPools(procfs), out.zfs.pools);
  status.duration_seconds = context.now() - start;
  out.collectors.push_back(std::move(status));
}

const SourceDescriptor& ZfsSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"zfs_pool"};
  static constexpr SourceDescriptor kDescriptor = Registered<ZfsSource, &Snapshot::zfs>({
      .name = "zfs",
      .reads = "<procfs>/spl/kstat/zfs/*/state and io, each sample",
      .collectors = kCollectors,
      .add_families = AddZfsFamilies,
  });
  return kDescriptor;
}

}  // namespace iowatch::daemon
