// Where the clones of a job set post their progress, in memory shared with
// the process that reports (an anonymous MAP_SHARED mapping, so clone
// processes forked after it is made write into it too): per clone its last
// RunProgress, whether it is measuring (past ramp_time) and whether it has
// ended. Each field is a lock-free atomic, so a reader may see one clone's
// fields from two consecutive updates: fine for a progress line.
// Thread-safety: Post/MarkMeasuring/MarkDone from each clone's own thread or
// process; the readers from anywhere.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/result.h"
#include "probes/run/job_runner.h"

namespace iowatch::probes {

class ProgressBoard {
 public:
  static Result<ProgressBoard> Create(size_t clones);
  ProgressBoard(ProgressBoard&& other) noexcept;
  ProgressBoard& operator=(ProgressBoard&&) = delete;
  ProgressBoard(const ProgressBoard&) = delete;
  ~ProgressBoard();

  void Post(size_t clone, const RunProgress& progress);
  void MarkMeasuring(size_t clone);
  void MarkDone(size_t clone);

  bool AnyMeasuring() const;
  bool Done(size_t clone) const;
  // The clones not done: rates added, fraction done the mean, eta the
  // longest, ramping while any ramps.
  RunProgress Total() const;

 private:
  struct Slot {
    std::atomic<double> fraction_done{0};
    std::atomic<double> read_iops{0};
    std::atomic<double> write_iops{0};
    std::atomic<double> read_bytes_per_second{0};
    std::atomic<double> write_bytes_per_second{0};
    std::atomic<int64_t> eta_ns{0};
    std::atomic<bool> ramping{false};
    std::atomic<bool> measuring{false};
    std::atomic<bool> done{false};
  };
  static_assert(std::atomic<double>::is_always_lock_free &&
                    std::atomic<int64_t>::is_always_lock_free,
                "shared between processes: the atomics must not hide a lock");

  ProgressBoard(Slot* slots, size_t count) : slots_(slots), count_(count) {}
  std::span<Slot> Slots() const { return {slots_, count_}; }

  Slot* slots_ = nullptr;
  size_t count_ = 0;
};

}  // namespace iowatch::probes
