#include <fmt/format.h>

#include "daemon/sources/pressure/pressure_source.h"

namespace iowatch::daemon {
namespace {

// Host PSI: `arg` is resource * 2 + kind (0 = some, 1 = full).
const collectors::PressureLine* PressureLineOf(const Snapshot& s, size_t arg) {
  const auto& resource = s.pressure.resources[arg / 2];
  if (!resource) return nullptr;
  if (arg % 2 == 0) return &resource->some;
  return resource->full ? &*resource->full : nullptr;
}

constexpr const char* kPressureKinds[] = {"some", "full"};

// node_exporter's node_pressure_*_{waiting,stalled}_seconds_total: some and full.
void PressureSeconds(const Snapshot& s, size_t, size_t arg, ExpositionWriter& w) {
  if (const auto* line = PressureLineOf(s, arg)) {
    w.Sample({}, static_cast<double>(line->total_us) / 1e6);
  }
}

template <bool kWindow>
void PressureAvg10(const Snapshot& s, size_t, size_t arg, ExpositionWriter& w) {
  const auto* line = PressureLineOf(s, arg);
  if (line == nullptr) return;
  const Label labels[] = {{"resource", collectors::kPressureResources[arg / 2]},
                          {"kind", kPressureKinds[arg % 2]}};
  w.Sample(labels, 2,
           kWindow ? s.pressure.avg10_window_max[arg / 2][arg % 2]
                   : collectors::PressureRatio(line->avg10));
}

}  // namespace

void AddPressureFamilies(TableBuilder& t) {
  constexpr const char* kNames[] = {"waiting", "stalled"};
  constexpr const char* kHelp[] = {"at least one task", "every non-idle task at once"};
  for (size_t r = 0; r < kPressureResourceCount; ++r) {
    const std::string_view resource = collectors::kPressureResources[r];
    for (size_t kind = 0; kind < 2; ++kind) {
      t.Add(fmt::format("iowatch_pressure_{}_{}_seconds_total", resource, kNames[kind]), "counter",
            fmt::format("Time {} was stalled on {} (/proc/pressure/{} {} total).", kHelp[kind],
                        resource, resource, kPressureKinds[kind]),
            {Once, PressureSeconds, r * 2 + kind});
    }
  }
  for (size_t arg = 0; arg < kPressureResourceCount * 2; ++arg) {
    t.Add("iowatch_pressure_avg10_ratio", "gauge",
          "The kernel's 10 s average share of time stalled (/proc/pressure avg10, 0..1).",
          {Once, PressureAvg10<false>, arg});
    t.Add("iowatch_pressure_avg10_ratio_window_max", "gauge",
          "Maximum of iowatch_pressure_avg10_ratio over the sampling window.",
          {Once, PressureAvg10<true>, arg});
  }
}

}  // namespace iowatch::daemon
