// Prometheus text exposition (format 0.0.4, as ExpositionWriter writes it)
// read back into prometheus-cpp's MetricFamily, so that what iowatch renders
// for /metrics can be pushed by prometheus-cpp's Gateway unchanged: one
// renderer per series, whether scraped or pushed. Reads # HELP and # TYPE,
// samples with escaped label values, +Inf/-Inf/NaN, and histograms
// (_bucket with le, _sum, _count; the +Inf bucket is the count). Errors name
// the line and what was expected.
// Thread-safety: pure functions.
#pragma once

#include <prometheus/metric_family.h>

#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch::daemon {

Result<std::vector<prometheus::MetricFamily>> ParseExposition(std::string_view text);

}  // namespace iowatch::daemon
