// A LatencyHistogram as bytes: the store's BLOB columns and a clone's result
// sent up a pipe (probes/run/result_wire.h) both use it.
//
// Format 1:
//   byte 0      format = 0x01
//   then pairs  (gap, count), each an unsigned LEB128 varint (common/byte_codec.h)
// for the non-zero buckets of LatencyHistogram::Buckets() in index order:
// gap = index − previous index − 1 (the first pair's gap is its index) and
// count ≥ 1. An empty histogram is no bytes at all. A typical run touches a
// few dozen of the 2048 buckets, so a blob is a few hundred bytes instead of
// 16 KiB, and the exact buckets (hence every percentile) come back unchanged.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"
#include "probes/stats/latency_histogram.h"

namespace iowatch::probes {

inline constexpr uint8_t kHistogramBlobFormat = 1;

// Empty (no bytes) when the histogram has no samples.
std::vector<uint8_t> EncodeHistogram(const LatencyHistogram& histogram);
// Empty input is an empty histogram. Errors (kParse) name what is wrong: an
// unknown format, a truncated or oversized varint, a bucket index past the
// end, a zero count.
Result<LatencyHistogram> DecodeHistogram(std::span<const uint8_t> blob);

}  // namespace iowatch::probes
