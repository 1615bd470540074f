#include "daemon/scheduling/device_busy.h"

#include <fmt/format.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <limits>

namespace iowatch::daemon {
namespace {

constexpr uint64_t kU32Max = std::numeric_limits<uint32_t>::max();

// io_ticks grows by at most the wall time between two reads, give or take the
// moments the kernel and we read the clocks: allow half the interval plus
// 100 ms of slack before calling a delta impossible.
bool Plausible(double delta_ms, double interval_ms) { return delta_ms <= interval_ms * 1.5 + 100; }

// Modulo 2^32 while both values fit in 32 bits (today's kernels print %u);
// a 64-bit counter (should a kernel widen it) is subtracted as is.
std::optional<uint64_t> TickDelta(uint64_t prev, uint64_t cur) {
  if (prev <= kU32Max && cur <= kU32Max) {
    return static_cast<uint32_t>(static_cast<uint32_t>(cur) - static_cast<uint32_t>(prev));
  }
  if (cur < prev) return std::nullopt;
  return cur - prev;
}

bool Overlaps(double start_s, double end_s, std::span<const TimeSpan> spans) {
  return std::ranges::any_of(
      spans, [&](const TimeSpan& s) { return start_s < s.end_s && end_s > s.start_s; });
}

}  // namespace

DeviceId MakeDeviceId(uint32_t major, uint32_t minor) { return makedev(major, minor); }

std::string FormatDevice(DeviceId device) {
  return fmt::format("{}:{}", major(device), minor(device));
}

void DeviceBusyTracker::Watch(DeviceId device) {
  std::lock_guard lock(mutex_);
  devices_.try_emplace(device);
}

void DeviceBusyTracker::Record(double now_s, DeviceId device, uint64_t io_ticks_ms) {
  std::lock_guard lock(mutex_);
  const auto it = devices_.find(device);
  if (it == devices_.end()) return;
  Series& series = it->second;
  if (series.last_s && now_s == *series.last_s) return;  // the same sample twice
  if (series.last_s && now_s > *series.last_s) {
    const double interval_ms = (now_s - *series.last_s) * 1000;
    const auto delta = TickDelta(series.last_ticks_ms, io_ticks_ms);
    if (delta && Plausible(static_cast<double>(*delta), interval_ms)) {
      // Slightly more ticks than wall time is clock skew: 100 % busy.
      const double busy_s = std::min(static_cast<double>(*delta), interval_ms) / 1000;
      series.intervals.push_back({*series.last_s, now_s, busy_s});
    }
  } else if (series.last_s) {
    series.intervals.clear();  // time went backwards: nothing kept is comparable
  }
  series.last_s = now_s;
  series.last_ticks_ms = io_ticks_ms;
  while (!series.intervals.empty() && series.intervals.front().end_s <= now_s - keep_s_) {
    series.intervals.pop_front();
  }
}

std::optional<double> DeviceBusyTracker::Utilization(DeviceId device, double window_s, double now_s,
                                                     std::span<const TimeSpan> exclude) const {
  std::lock_guard lock(mutex_);
  const auto it = devices_.find(device);
  if (it == devices_.end() || window_s <= 0) return std::nullopt;
  const double from_s = now_s - window_s;
  double usable_s = 0;
  double busy_s = 0;
  for (const Interval& interval : it->second.intervals) {
    const double start_s = std::max(interval.start_s, from_s);
    const double end_s = std::min(interval.end_s, now_s);
    if (end_s <= start_s) continue;
    // The whole sample interval goes: its ticks cannot be split between a
    // probe and what ran beside it.
    if (Overlaps(interval.start_s, interval.end_s, exclude)) continue;
    const double share = (end_s - start_s) / (interval.end_s - interval.start_s);
    usable_s += end_s - start_s;
    busy_s += interval.busy_s * share;  // busy time assumed spread evenly over the interval
  }
  if (usable_s < window_s / 2) return std::nullopt;
  return std::clamp(busy_s / usable_s, 0.0, 1.0);
}

size_t DeviceBusyTracker::IntervalCount(DeviceId device) const {
  std::lock_guard lock(mutex_);
  const auto it = devices_.find(device);
  return it == devices_.end() ? 0 : it->second.intervals.size();
}

}  // namespace iowatch::daemon
