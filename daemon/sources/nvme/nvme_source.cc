#include "daemon/sources/nvme/nvme_source.h"

#include <utility>

#include "collectors/nvme/nvme_class.h"
#include "common/file_tree.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"

namespace iowatch::daemon {
namespace {

class NvmeSource final : public SampleSource {
 public:
  // Fills out.nvme and appends the "nvme" collector's status.
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;
};

}  // namespace

void NvmeSource::Collect(const FileTree&, const FileTree& sysfs, const SourceContext& context,
                         Snapshot& out) {
  const double start = context.now();
  CollectorStatus status = OptionalFeatureStatus(
      "nvme", "no NVMe controllers", collectors::ReadNvmeControllers(sysfs), out.nvme.controllers);
  status.duration_seconds = context.now() - start;
  out.collectors.push_back(std::move(status));
}

const SourceDescriptor& NvmeSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"nvme"};
  static constexpr SourceDescriptor kDescriptor = Registered<NvmeSource, &Snapshot::nvme>({
      .name = "nvme",
      .reads = "<sysfs>/class/nvme/*/ and its namespaces' attributes, each sample",
      .collectors = kCollectors,
      .add_families = AddNvmeFamilies,
  });
  return kDescriptor;
}

}  // namespace iowatch::daemon
