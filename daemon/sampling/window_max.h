// WindowMax: the maximum of the values pushed during the last `window`
// samples, exact, in amortised O(1) per push. It keeps the classic monotonic
// queue (values that can still become the maximum, decreasing) in a small
// ring buffer. A series that is flat or only rises, as an idle device's
// rates are, has one entry, kept inline: 1,000 devices have 22,000 of these,
// and a heap block for each would double their memory. Noisy series hold a
// handful of entries; the buffer grows by doubling up to the window.
// Thread-safety: none; owned by the sampler.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>

namespace iowatch::daemon {

class WindowMax {
 public:
  WindowMax() = default;
  WindowMax(const WindowMax& other) { CopyFrom(other); }
  WindowMax(WindowMax&& other) noexcept { Swap(other); }
  WindowMax& operator=(WindowMax other) noexcept {
    Swap(other);
    return *this;
  }
  ~WindowMax() {
    if (capacity_ > 1) delete[] storage_.heap;
  }

  // `tick` increases by one per sample; entries older than `window` ticks drop out.
  void Push(uint64_t tick, double value, uint64_t window) {
    while (size_ > 0 && At(size_ - 1).value <= value) --size_;
    if (size_ == capacity_) Grow();
    At(size_++) = {tick, value};
    if (window == 0) window = 1;  // the newest value always counts
    while (At(0).tick + window <= tick) Pop();
  }
  double Max() const { return size_ > 0 ? At(0).value : 0; }

 private:
  struct Entry {
    uint64_t tick;
    double value;
  };

  Entry* Data() { return capacity_ > 1 ? storage_.heap : &storage_.single; }
  const Entry* Data() const { return capacity_ > 1 ? storage_.heap : &storage_.single; }
  // The i-th entry from the oldest; capacity_ is a power of two.
  Entry& At(uint32_t i) { return Data()[(head_ + i) & (capacity_ - 1)]; }
  const Entry& At(uint32_t i) const { return Data()[(head_ + i) & (capacity_ - 1)]; }
  void Pop() {
    head_ = (head_ + 1) & (capacity_ - 1);
    --size_;
  }

  void Grow() {
    const uint32_t capacity = capacity_ * 2;
    auto entries = std::make_unique<Entry[]>(capacity);
    for (uint32_t i = 0; i < size_; ++i) entries[i] = At(i);
    if (capacity_ > 1) delete[] storage_.heap;
    storage_.heap = entries.release();
    capacity_ = capacity;
    head_ = 0;
  }

  void CopyFrom(const WindowMax& other) {
    while (capacity_ < other.size_) Grow();
    for (uint32_t i = 0; i < other.size_; ++i) At(i) = other.At(i);
    size_ = other.size_;
  }

  void Swap(WindowMax& other) noexcept {
    std::swap(storage_, other.storage_);  // trivially copyable: whichever member is active
    std::swap(capacity_, other.capacity_);
    std::swap(head_, other.head_);
    std::swap(size_, other.size_);
  }

  union Storage {
    Entry single;  // capacity_ == 1
    Entry* heap;   // capacity_ > 1
  };
  Storage storage_{.single = {}};
  uint32_t capacity_ = 1;
  uint32_t head_ = 0;
  uint32_t size_ = 0;
};

}  // namespace iowatch::daemon
