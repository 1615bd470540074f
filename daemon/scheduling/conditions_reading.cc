#include "daemon/scheduling/conditions_reading.h"

#include <fmt/format.h>
#include <sys/sysmacros.h>

#include "collectors/disk/disk_util.h"
#include "collectors/disk/iostat.h"
#include "common/clock.h"
#include "common/decimal.h"

namespace iowatch::daemon {
namespace {

std::string DiskDir(DeviceId disk) {
  return fmt::format("dev/block/{}:{}/", major(disk), minor(disk));
}

// The probe's I/Os of one direction as the disk counts requests.
uint64_t Requests(const probes::DirectionStats& d, uint64_t block_bytes, uint64_t max_request) {
  if (max_request == 0 || block_bytes <= max_request) return d.ios;
  return d.ios * ((block_bytes + max_request - 1) / max_request);
}

double LatencySumSeconds(const probes::DirectionStats& d) {
  return d.lat.Mean() * static_cast<double>(d.lat.Count()) / 1e9;
}

std::optional<double> PressureShare(const std::optional<collectors::Pressure>& b,
                                    const std::optional<collectors::Pressure>& a, bool full,
                                    double seconds) {
  if (!b || !a) return std::nullopt;
  if (full && (!b->full || !a->full)) return std::nullopt;
  const uint64_t from = full ? b->full->total_us : b->some.total_us;
  const uint64_t to = full ? a->full->total_us : a->some.total_us;
  if (to < from) return std::nullopt;
  const double share = static_cast<double>(to - from) / 1e6 / seconds;
  return share > 1 ? 1 : share;
}

// The whole disk's work between two readings of its counters.
probes::LoadWindow DiskWork(const collectors::DiskCounters& b, const collectors::DiskCounters& a,
                            double seconds) {
  probes::LoadWindow work;
  work.seconds = seconds;
  work.device_ios = (a.reads - b.reads) + (a.writes - b.writes) + (a.discards - b.discards);
  work.device_bytes = ((a.read_sectors - b.read_sectors) + (a.write_sectors - b.write_sectors) +
                       (a.discard_sectors - b.discard_sectors)) *
                      collectors::kSectorBytes;
  work.device_busy_seconds = static_cast<double>(collectors::TickDelta(b.io_ms, a.io_ms)) / 1000;
  return work;
}

bool Comparable(const ConditionsReading& before, const ConditionsReading& after) {
  return before.disk && after.disk && after.monotonic_seconds > before.monotonic_seconds &&
         !collectors::WentBackwards(*before.disk, *after.disk);
}

}  // namespace

std::optional<uint64_t> RunDelayNs(std::string_view schedstat) {
  // "cpu_time_ns run_delay_ns timeslices" (Documentation/scheduler/sched-stats.rst).
  const size_t first = schedstat.find(' ');
  if (first == std::string_view::npos) return std::nullopt;
  std::string_view rest = schedstat.substr(first + 1);
  const size_t second = rest.find(' ');
  if (second == std::string_view::npos) return std::nullopt;
  return ParseDecimal<uint64_t>(rest.substr(0, second));
}

ConditionsReading ReadConditions(const FileTree& procfs, const FileTree& sysfs, DeviceId disk) {
  ConditionsReading reading;
  reading.monotonic_seconds = MonotonicSeconds();
  if (disk != 0) {
    if (auto counters = collectors::ReadDeviceCounters(sysfs, major(disk), minor(disk))) {
      reading.disk = *counters;
    }
  }
  if (auto pressure = collectors::ReadPressure(procfs, "io")) reading.io_pressure = *pressure;
  if (auto text = procfs.Read("thread-self/schedstat", kMaxSysfsAttributeBytes)) {
    reading.thread_run_delay_ns = RunDelayNs(*text);
  }
  if (auto text = procfs.Read("stat")) {
    if (auto stat = collectors::ParseProcStat(*text, procfs.PathOf("stat").string()))
      reading.cpu = stat->total;
  }
  return reading;
}

uint64_t MaxRequestBytes(const FileTree& sysfs, DeviceId disk) {
  const auto text = sysfs.Read(DiskDir(disk) + "queue/max_sectors_kb", kMaxSysfsAttributeBytes);
  const auto kib = text ? ParseDecimalLine<uint64_t>(*text) : std::nullopt;
  return kib ? *kib * 1024 : 0;
}

std::optional<probes::LoadWindow> ComputeLoadWindow(const ConditionsReading& before,
                                                    const ConditionsReading& after) {
  if (!Comparable(before, after)) return std::nullopt;
  return DiskWork(*before.disk, *after.disk, after.monotonic_seconds - before.monotonic_seconds);
}

std::optional<probes::RunConditions> ComputeRunConditions(const ConditionsReading& before,
                                                          const ConditionsReading& after,
                                                          const probes::ProbeResult& own,
                                                          uint64_t max_request_bytes,
                                                          bool other_probe) {
  if (!Comparable(before, after)) return std::nullopt;
  const double seconds = after.monotonic_seconds - before.monotonic_seconds;
  const collectors::DiskCounters& b = *before.disk;
  const collectors::DiskCounters& a = *after.disk;
  const probes::LoadWindow work = DiskWork(b, a, seconds);
  probes::RunConditions c;
  c.seconds = seconds;
  c.device_ios = work.device_ios;
  c.device_bytes = work.device_bytes;
  c.device_busy_seconds = work.device_busy_seconds;
  using collectors::TickDelta;
  c.device_io_seconds =
      static_cast<double>(TickDelta(b.read_ms, a.read_ms) + TickDelta(b.write_ms, a.write_ms) +
                          TickDelta(b.discard_ms, a.discard_ms)) /
      1000;
  const uint64_t block = own.spec.block_size;
  c.own_requests =
      Requests(own.read, block, max_request_bytes) + Requests(own.write, block, max_request_bytes);
  c.own_bytes = own.read.bytes + own.write.bytes;
  c.own_io_seconds = LatencySumSeconds(own.read) + LatencySumSeconds(own.write);
  c.io_pressure_some = PressureShare(before.io_pressure, after.io_pressure, false, seconds);
  c.io_pressure_full = PressureShare(before.io_pressure, after.io_pressure, true, seconds);
  if (before.thread_run_delay_ns && after.thread_run_delay_ns &&
      *after.thread_run_delay_ns >= *before.thread_run_delay_ns) {
    c.cpu_wait = std::min(
        1.0, static_cast<double>(*after.thread_run_delay_ns - *before.thread_run_delay_ns) / 1e9 /
                 seconds);
  }
  if (before.cpu && after.cpu &&
      collectors::TotalTicks(*after.cpu) > collectors::TotalTicks(*before.cpu) &&
      after.cpu->steal >= before.cpu->steal) {
    c.cpu_steal = static_cast<double>(after.cpu->steal - before.cpu->steal) /
                  static_cast<double>(collectors::TotalTicks(*after.cpu) -
                                      collectors::TotalTicks(*before.cpu));
  }
  c.other_probe = other_probe;
  return c;
}

}  // namespace iowatch::daemon
