#include "daemon/sources/pressure/pressure_source.h"

#include <array>
#include <cstdint>

#include "collectors/pressure/pressure.h"
#include "common/file_tree.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"
#include "daemon/sampling/window_max.h"

namespace iowatch::daemon {
namespace {

class PressureSource final : public SampleSource {
 public:
  // Fills out.pressure and appends the "pressure" collector's status.
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  std::array<std::array<WindowMax, 2>, kPressureResourceCount> windows_;
  KeptFiles kept_;  // pressure/{cpu,io,memory}
};

}  // namespace

void PressureSource::Collect(const FileTree& given_procfs, const FileTree& /*sysfs*/,
                             const SourceContext& context, Snapshot& out) {
  const FileTree procfs = given_procfs.Keeping(kept_);
  const double start = context.now();
  CollectorStatus status{"pressure", 0, true, 0, {}, {}};
  for (size_t r = 0; r < kPressureResourceCount; ++r) {
    auto pressure = collectors::ReadPressure(procfs, collectors::kPressureResources[r]);
    if (!pressure) {
      if (status.success) status.error = pressure.error().ToString();  // the first failure
      status.success = false;
      continue;
    }
    // avg10 is a percentage; the ratio (0..1) is exported. A missing "full"
    // line (cpu before Linux 5.13) pushes nothing: its maximum stays unset.
    const collectors::PressureLine* lines[] = {&pressure->some,
                                               pressure->full ? &*pressure->full : nullptr};
    for (size_t kind = 0; kind < 2; ++kind) {
      if (lines[kind] == nullptr) continue;
      windows_[r][kind].Push(context.tick, collectors::PressureRatio(lines[kind]->avg10),
                             context.window_samples);
      out.pressure.avg10_window_max[r][kind] = windows_[r][kind].Max();
    }
    out.pressure.resources[r] = *pressure;
  }
  status.duration_seconds = context.now() - start;
  out.collectors.push_back(std::move(status));
}

const SourceDescriptor& PressureSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"pressure"};
  static constexpr SourceDescriptor kDescriptor = Registered<PressureSource, &Snapshot::pressure>({
      .name = "pressure",
      .reads = "<procfs>/pressure/{cpu,io,memory}",
      .collectors = kCollectors,
      .add_families = AddPressureFamilies,
  });
  return kDescriptor;
}

}  // namespace iowatch::daemon
