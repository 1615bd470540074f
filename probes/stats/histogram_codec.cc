#include "probes/stats/histogram_codec.h"

#include <fmt/format.h>

#include <limits>
#include <optional>
#include <string>

#include "common/byte_codec.h"

namespace iowatch::probes {
namespace {

std::unexpected<Error> BadBlob(std::string message) {
  return MakeError(ErrorCode::kParse, "histogram blob: " + std::move(message));
}

}  // namespace

std::vector<uint8_t> EncodeHistogram(const LatencyHistogram& histogram) {
  std::vector<uint8_t> out;
  if (histogram.Count() == 0) return out;
  out.push_back(kHistogramBlobFormat);
  const std::span<const uint64_t> buckets = histogram.Buckets();
  size_t next = 0;  // the index a gap of 0 would name
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (buckets[i] == 0) continue;
    PutVarint(out, i - next);
    PutVarint(out, buckets[i]);
    next = i + 1;
  }
  return out;
}

Result<LatencyHistogram> DecodeHistogram(std::span<const uint8_t> blob) {
  LatencyHistogram histogram;
  if (blob.empty()) return histogram;
  if (blob[0] != kHistogramBlobFormat) {
    return BadBlob(fmt::format("unknown format {} (expected {})", blob[0], kHistogramBlobFormat));
  }
  std::vector<uint64_t> buckets(LatencyHistogram::BucketCount(), 0);
  uint64_t total = 0;
  size_t next = 0;
  for (size_t at = 1; at < blob.size();) {
    const size_t pair_at = at;
    const std::optional<uint64_t> gap = GetVarint(blob, at);
    const std::optional<uint64_t> count = gap ? GetVarint(blob, at) : std::nullopt;
    if (!gap || !count)
      return BadBlob(fmt::format("truncated or oversized varint at byte {}", pair_at));
    if (*gap >= buckets.size() - next) {
      return BadBlob(fmt::format("bucket index past {} at byte {}", buckets.size() - 1, pair_at));
    }
    if (*count == 0) return BadBlob(fmt::format("zero count at byte {}", pair_at));
    if (*count > std::numeric_limits<uint64_t>::max() - total) {
      return BadBlob("total count overflows 64 bits");
    }
    const size_t index = next + static_cast<size_t>(*gap);
    buckets[index] = *count;
    total += *count;
    next = index + 1;
  }
  histogram.AssignBuckets(buckets);
  return histogram;
}

}  // namespace iowatch::probes
