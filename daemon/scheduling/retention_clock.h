// The time the store's retention is measured against. Not the wall clock as
// it reads at prune time: set forwards by more than the retention (a bad NTP
// source, a dead RTC battery reading 2038) it would make one prune delete
// every run that no baseline holds. Instead the wall clock is read once, when
// the store is opened, capped at the newest run already stored, and advanced
// from there by the monotonic clock. A jump while the daemon runs then moves
// nothing; a jump before it started only delays pruning (by as long as the
// clock was wrong, or the daemon was down), and delaying loses nothing.
// Thread-safety: a value; Now() is const.
#pragma once

#include <cstdint>
#include <optional>

namespace iowatch::daemon {

class RetentionClock {
 public:
  // `wall_ms`, `steady_ms`: both clocks read now; `newest_stored_ms`: the
  // newest run's start in the store, if it has any.
  RetentionClock(int64_t wall_ms, int64_t steady_ms, std::optional<int64_t> newest_stored_ms)
      : anchor_ms_(newest_stored_ms && *newest_stored_ms < wall_ms ? *newest_stored_ms : wall_ms),
        steady_anchor_ms_(steady_ms) {}

  // Unix ms: the anchor plus the monotonic time since.
  int64_t Now(int64_t steady_ms) const { return anchor_ms_ + (steady_ms - steady_anchor_ms_); }

 private:
  int64_t anchor_ms_;
  int64_t steady_anchor_ms_;
};

}  // namespace iowatch::daemon
