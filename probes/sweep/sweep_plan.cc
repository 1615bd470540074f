#include "probes/sweep/sweep_plan.h"

#include <fmt/format.h>

namespace iowatch::probes {

std::string_view ToString(SweepMode mode) { return NameIn<SweepMode>(kSweepModes, mode); }

std::string_view ToString(SweepLatency latency) {
  return NameIn<SweepLatency>(kSweepLatencies, latency);
}

std::vector<SweepPoint> SweepPoints(const SweepGrid& grid) {
  std::vector<SweepPoint> points;
  for (const SweepMode mode : grid.modes) {
    for (const bool write : grid.writes) {
      for (const bool random : grid.randoms) {
        for (const uint64_t bs : grid.block_sizes) {
          for (const uint32_t depth : grid.depths)
            points.push_back({mode, write, random, bs, depth});
        }
      }
    }
  }
  return points;
}

Result<std::chrono::milliseconds> PointRuntime(const SweepGrid& grid) {
  const size_t points = SweepPoints(grid).size();
  if (points == 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the grid is empty: each of --bs, --iodepth, --rw, --pattern and --mode "
                     "needs a value");
  }
  const auto each = std::chrono::duration_cast<std::chrono::milliseconds>(grid.budget / points);
  if (each < kMinPointRuntime) {
    const auto needed = std::chrono::ceil<std::chrono::seconds>(kMinPointRuntime * points);
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("--budget: {} points get {} ms each, less than {} ms; give "
                                 "--budget={}s or fewer points",
                                 points, each.count(), kMinPointRuntime.count(), needed.count()));
  }
  return each;
}

std::string SizeText(uint64_t bytes) {
  if (bytes % (1 << 20) == 0) return fmt::format("{}m", bytes >> 20);
  if (bytes % 1024 == 0) return fmt::format("{}k", bytes >> 10);
  return fmt::format("{}", bytes);
}

std::string RateText(double bytes_per_second) {
  const double mib = bytes_per_second / (1 << 20);
  if (mib >= 1024) return fmt::format("{:.1f} GiB/s", mib / 1024);
  return fmt::format("{:.0f} MiB/s", mib);
}

std::string PointName(const SweepPoint& p) {
  return fmt::format("{}-{}{}-{}-qd{}", ToString(p.mode), p.random ? "rand" : "seq",
                     p.write ? "write" : "read", SizeText(p.block_size), p.iodepth);
}

JobSpec PointSpec(const JobSpec& base, const SweepPoint& point, std::chrono::milliseconds runtime) {
  JobSpec spec = base;  // its name too: every point runs on the one file <directory>/<name>.0.0
  if (point.write) {
    spec.rw = point.random ? RwMode::kRandWrite : RwMode::kWrite;
  } else {
    spec.rw = point.random ? RwMode::kRandRead : RwMode::kRead;
  }
  spec.block_size = point.block_size;
  spec.iodepth = point.iodepth;
  spec.direct = point.mode != SweepMode::kBuffered;
  spec.time_based = true;
  spec.runtime = runtime;
  spec.ramp_time = {};
  return spec;
}

SweepMeasure MeasureOf(const ProbeResult& result, bool write) {
  const DirectionStats& d = write ? result.write : result.read;
  SweepMeasure m;
  m.iops = d.Iops();
  m.bytes_per_second = d.BandwidthBytesPerSecond();
  m.lat_p50_ns = d.lat_histogram.Count() > 0 ? d.lat_histogram.Percentile(50) : 0;
  m.lat_p99_ns = d.lat_histogram.Count() > 0 ? d.lat_histogram.Percentile(99) : 0;
  m.clat_p50_ns = d.clat_histogram.Count() > 0 ? d.clat_histogram.Percentile(50) : 0;
  m.clat_p99_ns = d.clat_histogram.Count() > 0 ? d.clat_histogram.Percentile(99) : 0;
  const double cpu = result.cpu.user_seconds + result.cpu.system_seconds;
  const double seconds = std::chrono::duration<double>(result.JobRuntime()).count();
  m.cpu_percent = seconds > 0 ? 100 * cpu / seconds : 0;
  const double gib = static_cast<double>(d.bytes) / (1ULL << 30);
  m.cpu_seconds_per_gib = gib > 0 ? cpu / gib : 0;
  m.end = std::string(ToString(result.end));
  return m;
}

}  // namespace iowatch::probes
