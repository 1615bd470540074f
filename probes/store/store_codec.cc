#include "probes/store/store_codec.h"

#include <limits>
#include <optional>

namespace iowatch::probes {
namespace {

void PutVarint(std::vector<uint8_t>& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<uint8_t>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<uint8_t>(value));
}

// Advances `at`; nullopt when the input ends inside the varint or it does not
// fit in 64 bits (ten bytes, the last holding a single bit).
std::optional<uint64_t> GetVarint(std::span<const uint8_t> in, size_t& at) {
  uint64_t value = 0;
  for (unsigned shift = 0; at < in.size(); shift += 7) {
    const uint8_t byte = in[at++];
    if (shift == 63 && byte > 1) return std::nullopt;
    value |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) return value;
  }
  return std::nullopt;
}

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

std::string JobOptionsText(const JobSpec& spec) {
  std::string out;
  for (const JobOption& option : ToJobOptions(spec)) {
    if (!out.empty()) out += ';';
    out += option.name;
    out += '=';
    for (char c : option.value) {
      if (c == ';' || c == '\\') out += '\\';
      out += c;
    }
  }
  return out;
}

Result<JobSpec> ParseJobOptionsText(std::string_view text) {
  std::vector<JobOption> options;
  JobOption current;
  bool in_value = false;
  const auto finish = [&]() -> Status {
    if (!in_value) {
      return MakeError(ErrorCode::kParse,
                       fmt::format("job options: expected name=value, found \"{}\"", current.name));
    }
    options.push_back(std::move(current));
    current = JobOption{};
    in_value = false;
    return {};
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!in_value) {
      if (c == '=') {
        in_value = true;
      } else if (c == ';') {
        if (Status done = finish(); !done) return std::unexpected(done.error());
      } else {
        current.name += c;
      }
    } else if (c == '\\' && i + 1 < text.size()) {
      current.value += text[++i];
    } else if (c == ';') {
      if (Status done = finish(); !done) return std::unexpected(done.error());
    } else {
      current.value += c;
    }
  }
  if (!text.empty()) {
    if (Status done = finish(); !done) return std::unexpected(done.error());
  }
  return ParseJobOptions(options);
}

}  // namespace iowatch::probes
