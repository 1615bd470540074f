#include "probes/run/probe_result.h"

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

std::string_view ToString(RunEnd end) {
  switch (end) {
    case RunEnd::kCompleted:
      return "completed";
    case RunEnd::kInterrupted:
      return "interrupted";
    case RunEnd::kTimedOut:
      return "timed_out";
    case RunEnd::kFailed:
      return "failed";
  }
  return "unknown";  // only for a value cast from outside the enum
}

}  // namespace iowatch::probes
