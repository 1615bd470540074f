// Text for families collected from prometheus-cpp (iowatch's own
// instrumentation: HTTP, sampling, configuration, probe runs) in the same
// exposition format as the rest of /metrics, through ExpositionWriter:
// families sorted by name and samples by labels, so a scrape is
// reproducible whatever order prometheus-cpp's hash maps keep, and numbers
// in the same shortest round-trip form as the bulk families (prometheus-cpp's
// own TextSerializer rounds to 16 digits).
// Thread-safety: pure function.
#pragma once

#include <prometheus/metric_family.h>

#include <string>
#include <vector>

namespace iowatch::daemon {

void AppendCollected(std::vector<prometheus::MetricFamily> families, std::string& out);

}  // namespace iowatch::daemon
