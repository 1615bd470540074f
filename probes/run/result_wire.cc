#include "probes/run/result_wire.h"

#include <fmt/format.h>

#include <optional>
#include <string>

#include "common/byte_codec.h"
#include "probes/stats/histogram_codec.h"

namespace iowatch::probes {
namespace {

constexpr uint8_t kWireFormat = 1;

void PutStats(ByteWriter& w, const RunningStats& s) {
  w.Varint(s.Count());
  w.Varint(s.Min());
  w.Varint(s.Max());
  w.Double(s.Mean());
  w.Double(s.StdDev());
}

void PutDirection(ByteWriter& w, const DirectionStats& d) {
  for (const uint64_t v : {d.ios, d.bytes, d.short_ios, d.errors}) w.Varint(v);
  w.Varint(static_cast<uint64_t>(d.runtime.count()));
  PutStats(w, d.slat);
  PutStats(w, d.clat);
  PutStats(w, d.lat);
  w.Bytes(EncodeHistogram(d.clat_histogram));
  w.Bytes(EncodeHistogram(d.lat_histogram));
}

void PutError(ByteWriter& w, const Error& e) {
  w.Varint(static_cast<uint64_t>(e.code));
  w.String(e.message);
  w.String(e.path);
  for (const int v : {e.line, e.os_errno, e.column}) w.Varint(static_cast<uint32_t>(v));
}

void PutResult(ByteWriter& w, const ProbeResult& r) {
  PutDirection(w, r.read);
  PutDirection(w, r.write);
  w.Varint(r.fsyncs);
  w.Double(r.cpu.user_seconds);
  w.Double(r.cpu.system_seconds);
  w.Varint(r.cpu.voluntary_switches);
  w.Varint(r.cpu.involuntary_switches);
  w.Varint(static_cast<uint64_t>(r.elapsed.count()));
  w.Varint(r.jobs);
  w.Varint(static_cast<uint64_t>(r.summed_elapsed.count()));
  w.Varint(static_cast<uint64_t>(r.end));
  w.Varint(r.error ? 1 : 0);
  if (r.error) PutError(w, *r.error);
  w.Varint(r.fallbacks.size());
  for (const EngineFallback& f : r.fallbacks) {
    w.String(f.name);
    w.String(f.reason);
  }
  w.Varint(r.abandoned_ios);
}

// Reads in EncodeResult's order; the first missing or out-of-range field
// leaves `failed` set, and every later read is a no-op.
class FieldReader {
 public:
  explicit FieldReader(std::span<const uint8_t> in) : in_(in) {}

  uint64_t Uint(uint64_t max = UINT64_MAX) {
    const std::optional<uint64_t> v = in_.Varint();
    if (!v || *v > max) return Fail(uint64_t{0});
    return *v;
  }
  double Double() {
    const std::optional<double> v = in_.Double();
    return v ? *v : Fail(0.0);
  }
  std::string String() {
    std::optional<std::string> v = in_.String();
    return v ? std::move(*v) : Fail(std::string());
  }
  LatencyHistogram Histogram() {
    const auto bytes = in_.Bytes();
    if (!bytes) return Fail(LatencyHistogram());
    Result<LatencyHistogram> h = DecodeHistogram(*bytes);
    return h ? std::move(*h) : Fail(LatencyHistogram());
  }
  bool Failed() const { return failed_at_.has_value(); }
  size_t FailedAt() const { return failed_at_.value_or(0); }
  bool AtEnd() const { return in_.AtEnd(); }
  size_t Position() const { return in_.Position(); }

 private:
  template <typename T>
  T Fail(T value) {
    if (!failed_at_) failed_at_ = in_.Position();
    return value;
  }

  ByteReader in_;
  std::optional<size_t> failed_at_;
};

RunningStats GetStats(FieldReader& r) {
  const uint64_t count = r.Uint();
  const uint64_t min = r.Uint();
  const uint64_t max = r.Uint();
  const double mean = r.Double();
  const double stddev = r.Double();
  return count == 0 ? RunningStats() : RunningStats::FromSummary(count, min, max, mean, stddev);
}

DirectionStats GetDirection(FieldReader& r) {
  DirectionStats d;
  d.ios = r.Uint();
  d.bytes = r.Uint();
  d.short_ios = r.Uint();
  d.errors = r.Uint();
  d.runtime = std::chrono::nanoseconds(r.Uint(INT64_MAX));
  d.slat = GetStats(r);
  d.clat = GetStats(r);
  d.lat = GetStats(r);
  d.clat_histogram = r.Histogram();
  d.lat_histogram = r.Histogram();
  return d;
}

Error GetError(FieldReader& r) {
  Error e;
  e.code = static_cast<ErrorCode>(r.Uint(static_cast<uint64_t>(ErrorCode::kUnsupported)));
  e.message = r.String();
  e.path = r.String();
  e.line = static_cast<int>(r.Uint(INT32_MAX));
  e.os_errno = static_cast<int>(r.Uint(INT32_MAX));
  e.column = static_cast<int>(r.Uint(INT32_MAX));
  return e;
}

ProbeResult GetResult(FieldReader& r) {
  ProbeResult p;
  p.read = GetDirection(r);
  p.write = GetDirection(r);
  p.fsyncs = r.Uint();
  p.cpu.user_seconds = r.Double();
  p.cpu.system_seconds = r.Double();
  p.cpu.voluntary_switches = r.Uint();
  p.cpu.involuntary_switches = r.Uint();
  p.elapsed = std::chrono::nanoseconds(r.Uint(INT64_MAX));
  p.jobs = static_cast<uint32_t>(r.Uint(UINT32_MAX));
  p.summed_elapsed = std::chrono::nanoseconds(r.Uint(INT64_MAX));
  p.end = static_cast<RunEnd>(r.Uint(static_cast<uint64_t>(RunEnd::kFailed)));
  if (r.Uint(1) == 1) p.error = GetError(r);
  const uint64_t fallbacks = r.Uint(64);
  for (uint64_t i = 0; i < fallbacks && !r.Failed(); ++i) {
    std::string name = r.String();
    p.fallbacks.push_back({std::move(name), r.String()});
  }
  p.abandoned_ios = static_cast<uint32_t>(r.Uint(UINT32_MAX));
  return p;
}

std::unexpected<Error> Malformed(std::string what) {
  return MakeError(ErrorCode::kParse, "a clone's result: " + std::move(what));
}

}  // namespace

std::vector<uint8_t> EncodeResult(const Result<ProbeResult>& result) {
  ByteWriter w;
  w.Varint(kWireFormat);
  w.Varint(result ? 0 : 1);
  if (result) {
    PutResult(w, *result);
  } else {
    PutError(w, result.error());
  }
  return std::move(w).Finish();
}

Result<Result<ProbeResult>> DecodeResult(std::span<const uint8_t> bytes, const JobSpec& spec) {
  if (bytes.empty()) return Malformed("nothing was sent (the clone died before it reported)");
  FieldReader r(bytes);
  if (const uint64_t format = r.Uint(); format != kWireFormat || r.Failed()) {
    return Malformed(fmt::format("unknown format {} (expected {})", format, kWireFormat));
  }
  const bool is_error = r.Uint(1) == 1;
  Result<ProbeResult> decoded = is_error ? Result<ProbeResult>(std::unexpected(GetError(r)))
                                         : Result<ProbeResult>(GetResult(r));
  if (r.Failed()) return Malformed(fmt::format("truncated or invalid at byte {}", r.FailedAt()));
  if (!r.AtEnd())
    return Malformed(fmt::format("{} bytes past the end", bytes.size() - r.Position()));
  if (decoded) decoded->spec = spec;
  return decoded;
}

}  // namespace iowatch::probes
