#include "probes/run/probe_result.h"

#include <algorithm>

#include "common/enum_names.h"

namespace iowatch::probes {

uint64_t DirectionStats::RuntimeMs() const {
  // fio keeps runtime as whole milliseconds (utime_since / 1000, truncated);
  // the rates below divide by that, not by the exact duration.
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(runtime).count();
  return ms > 0 ? static_cast<uint64_t>(ms) : 0;
}

double DirectionStats::Iops() const {
  const uint64_t ms = RuntimeMs();
  if (ms == 0) return 0;
  return 1000.0 * static_cast<double>(ios) / static_cast<double>(ms);
}

double DirectionStats::BandwidthBytesPerSecond() const {
  const uint64_t ms = RuntimeMs();
  if (ms == 0) return 0;
  // fio's bw_bytes is the integer quotient 1000 · io_bytes / runtime_ms; the
  // split form gives the same floor without 1000 · bytes overflowing.
  const uint64_t whole = bytes / ms * 1000 + bytes % ms * 1000 / ms;
  return static_cast<double>(whole);
}

namespace {

void AddDirection(DirectionStats& sum, const DirectionStats& d) {
  sum.ios += d.ios;
  sum.bytes += d.bytes;
  sum.short_ios += d.short_ios;
  sum.errors += d.errors;
  sum.runtime = std::max(sum.runtime, d.runtime);
  sum.slat.Merge(d.slat);
  sum.clat.Merge(d.clat);
  sum.lat.Merge(d.lat);
  sum.clat_histogram.Merge(d.clat_histogram);
  sum.lat_histogram.Merge(d.lat_histogram);
}

// The order in which ends outrank each other in a sum.
int Severity(RunEnd end) {
  switch (end) {
    case RunEnd::kCompleted:
      return 0;
    case RunEnd::kInterrupted:
      return 1;
    case RunEnd::kTimedOut:
      return 2;
    case RunEnd::kFailed:
      return 3;
  }
  return 3;
}

}  // namespace

ProbeResult SumResults(std::span<const ProbeResult> results) {
  ProbeResult sum;
  if (results.empty()) return sum;
  sum.spec = results.front().spec;
  sum.jobs = 0;
  for (const ProbeResult& r : results) {
    AddDirection(sum.read, r.read);
    AddDirection(sum.write, r.write);
    sum.fsyncs += r.fsyncs;
    sum.cpu.user_seconds += r.cpu.user_seconds;
    sum.cpu.system_seconds += r.cpu.system_seconds;
    sum.cpu.voluntary_switches += r.cpu.voluntary_switches;
    sum.cpu.involuntary_switches += r.cpu.involuntary_switches;
    sum.elapsed = std::max(sum.elapsed, r.elapsed);
    sum.summed_elapsed += r.JobRuntime();
    sum.jobs += r.jobs;
    if (Severity(r.end) > Severity(sum.end)) sum.end = r.end;
    if (!sum.error && r.error) sum.error = r.error;
    for (const EngineFallback& fallback : r.fallbacks) {
      if (std::ranges::find(sum.fallbacks, fallback.name, &EngineFallback::name) ==
          sum.fallbacks.end()) {
        sum.fallbacks.push_back(fallback);
      }
    }
    sum.abandoned_ios += r.abandoned_ios;
  }
  return sum;
}

constexpr EnumName<RunEnd> kRunEndNames[] = {{RunEnd::kCompleted, "completed"},
                                             {RunEnd::kInterrupted, "interrupted"},
                                             {RunEnd::kTimedOut, "timed_out"},
                                             {RunEnd::kFailed, "failed"}};
static_assert(NamesEveryValue<kRunEndNames>());

std::string_view ToString(RunEnd end) { return NameIn<RunEnd>(kRunEndNames, end); }

}  // namespace iowatch::probes
