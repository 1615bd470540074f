// iowatch_advice_finding{device, finding, severity}: `iowatch advise`'s
// findings for the sample's disks (daemon/sampling/snapshot_advice.h).
#include "daemon/metrics/advice_families.h"

#include "daemon/sampling/snapshot_advice.h"

namespace iowatch::daemon {
namespace {

void AdviceFindings(const Snapshot& s, size_t, size_t, ExpositionWriter& w) {
  for (const advice::AdviceFinding& f : SnapshotAdvice(s)) {
    w.Sample(
        {{"device", f.device}, {"finding", f.finding}, {"severity", advice::ToString(f.severity)}},
        1);
  }
}

}  // namespace

void AddAdviceFamilies(TableBuilder& t) {
  t.Add("iowatch_advice_finding", "gauge",
        "1 while an `iowatch advise` finding holds for the device (stripe geometry, partition "
        "alignment, read-ahead against the request sizes it receives).",
        {[](const Snapshot&) -> size_t { return 1; }, AdviceFindings});
}

}  // namespace iowatch::daemon
