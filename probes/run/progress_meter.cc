#include "probes/run/progress_meter.h"

#include <algorithm>

namespace iowatch::probes {
namespace {

constexpr uint64_t kDefaultIntervalNs = 1'000'000'000;

}  // namespace

ProgressMeter::ProgressMeter(const std::function<void(const RunProgress&)>& report,
                             std::chrono::nanoseconds interval)
    : report_(report),
      interval_ns_(interval.count() > 0 ? static_cast<uint64_t>(interval.count())
                                        : kDefaultIntervalNs) {}

void ProgressMeter::Start(uint64_t now_ns) {
  last_report_ns_ = now_ns;
  if (report_) next_report_ns_ = now_ns + interval_ns_;
}

void ProgressMeter::Report(uint64_t now_ns, const RunPosition& position) {
  next_report_ns_ = now_ns + interval_ns_;
  const double interval_s = static_cast<double>(now_ns - last_report_ns_) / 1e9;
  last_report_ns_ = now_ns;
  RunProgress progress;
  progress.ramping = position.ramping;
  if (interval_s > 0) {
    const auto rate = [&](const uint64_t* done, uint64_t* reported, int dir) {
      const double value = static_cast<double>(done[dir] - reported[dir]) / interval_s;
      reported[dir] = done[dir];
      return value;
    };
    progress.read_iops = rate(done_ios_, reported_ios_, 0);
    progress.write_iops = rate(done_ios_, reported_ios_, 1);
    progress.read_bytes_per_second = rate(done_bytes_, reported_bytes_, 0);
    progress.write_bytes_per_second = rate(done_bytes_, reported_bytes_, 1);
  }
  if (position.ramping) {
    progress.eta = std::chrono::nanoseconds(position.ramp_end_ns - now_ns + position.runtime_ns);
  } else {
    const uint64_t elapsed_ns = now_ns - position.measured_start_ns;
    double fraction = 0;
    if (position.runtime_ns != 0) {
      fraction = static_cast<double>(elapsed_ns) / static_cast<double>(position.runtime_ns);
    }
    if (position.ios_limit != UINT64_MAX && position.ios_limit != 0) {
      fraction = std::max(fraction, static_cast<double>(position.measured_issued) /
                                        static_cast<double>(position.ios_limit));
    }
    progress.fraction_done = std::min(fraction, 1.0);
    if (progress.fraction_done > 0) {
      // Whichever limit is closest dominates the fraction, so this is the
      // time-based remainder for time-limited runs and an extrapolation
      // otherwise.
      progress.eta = std::chrono::nanoseconds(static_cast<int64_t>(
          static_cast<double>(elapsed_ns) * (1 - progress.fraction_done) / progress.fraction_done));
    }
  }
  report_(progress);
}

}  // namespace iowatch::probes
