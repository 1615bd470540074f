// How the store writes the parts of a run that are not plain columns.
//
// Histogram BLOB, format 1 (run_ops.clat_histogram, run_ops.lat_histogram):
//   byte 0      format = 0x01
//   then pairs  (gap, count), each an unsigned LEB128 varint (7 bits per
//               byte, least significant group first, high bit = more follows)
// for the non-zero buckets of LatencyHistogram::Buckets() in index order:
// gap = index − previous index − 1 (the first pair's gap is its index) and
// count ≥ 1. An empty histogram is stored as NULL, not as a blob. A typical
// run touches a few dozen of the 2048 buckets, so a blob is a few hundred
// bytes instead of 16 KiB, and the exact buckets (hence every percentile)
// come back unchanged.
//
// Job options text (runs.job_options): ToJobOptions joined as
// "name=value;name=value", '\' and ';' inside values escaped with '\', an
// empty value (a bare flag such as time_based) written as "time_based=".
// Every option is kept, the name too, so the JobSpec can be rebuilt.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "probes/spec/job_spec.h"
#include "probes/stats/latency_histogram.h"

namespace iowatch::probes {

inline constexpr uint8_t kHistogramBlobFormat = 1;

// Empty (no bytes) when the histogram has no samples.
std::vector<uint8_t> EncodeHistogram(const LatencyHistogram& histogram);
// Empty input is an empty histogram. Errors (kParse) name what is wrong: an
// unknown format, a truncated or oversized varint, a bucket index past the
// end, a zero count.
Result<LatencyHistogram> DecodeHistogram(std::span<const uint8_t> blob);

std::string JobOptionsText(const JobSpec& spec);
// Splits the text back into options and runs ParseJobOptions on them.
Result<JobSpec> ParseJobOptionsText(std::string_view text);

}  // namespace iowatch::probes
