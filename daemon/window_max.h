// WindowMax: the maximum of the values pushed during the last `window`
// samples, exact, in amortised O(1) per push. It keeps the classic monotonic
// queue (values that can still become the maximum, decreasing) in a small
// vector: for ordinary noisy series it holds a handful of entries, so tens of
// thousands of series cost little memory.
// Thread-safety: none; owned by the sampler.
#pragma once

#include <cstdint>
#include <vector>

namespace iowatch::daemon {

class WindowMax {
 public:
  // `tick` increases by one per sample; entries older than `window` ticks drop out.
  void Push(uint64_t tick, double value, uint64_t window) {
    while (size() > 0 && entries_.back().value <= value) entries_.pop_back();
    entries_.push_back({tick, value});
    if (window == 0) window = 1;  // the newest value always counts
    while (entries_[head_].tick + window <= tick) ++head_;
    if (head_ > 16 && head_ * 2 > entries_.size()) {  // compact now and then
      entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  double Max() const { return size() > 0 ? entries_[head_].value : 0; }

 private:
  struct Entry {
    uint64_t tick;
    double value;
  };
  size_t size() const { return entries_.size() - head_; }
  std::vector<Entry> entries_;
  size_t head_ = 0;
};

}  // namespace iowatch::daemon
