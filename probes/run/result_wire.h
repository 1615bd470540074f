// A clone's Result<ProbeResult> as bytes, for the pipe from a clone process
// (thread=0) to the process that reports: every figure a report or a sum
// needs, exactly (counts, histograms bucket by bucket, latency summaries as
// count, min, max, mean and stddev), not the spec, which the reader has.
// Format 1: byte 0 = 1, then 0 and a result, or 1 and an error; the
// fields in the order of EncodeResult (common/byte_codec.h encodings).
// Decoding a truncated, oversized or trailing-garbage message is an error
// (kParse) saying where, never a partial result.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"
#include "probes/run/probe_result.h"

namespace iowatch::probes {

std::vector<uint8_t> EncodeResult(const Result<ProbeResult>& result);
// The decoded result gets `spec`; its outer Result holds the clone's own
// error when the clone sent one.
Result<Result<ProbeResult>> DecodeResult(std::span<const uint8_t> bytes, const JobSpec& spec);

}  // namespace iowatch::probes
