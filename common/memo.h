// Memo<T>: a value computed on first use and kept, for a derived field of an
// object that is immutable once published (a daemon Snapshot), so that the
// readers of one object (every scrape, the status page) pay for it once and
// an object nobody reads never pays. A copy or an assignment starts empty: a
// copy edited before publication computes its own value.
// Thread-safety: Get() may be called from any number of threads; the first
// computes while the others wait.
#pragma once

#include <mutex>
#include <optional>
#include <utility>

namespace iowatch {

template <class T>
class Memo {
 public:
  Memo() = default;
  Memo(const Memo& /*other*/) {}
  Memo(Memo&& /*other*/) noexcept {}
  Memo& operator=(const Memo& /*other*/) {
    Reset();
    return *this;
  }
  Memo& operator=(Memo&& /*other*/) noexcept {
    Reset();
    return *this;
  }
  ~Memo() = default;

  template <class Compute>
  const T& Get(Compute&& compute) const {
    std::lock_guard lock(mutex_);
    if (!value_) value_.emplace(std::forward<Compute>(compute)());
    return *value_;
  }

 private:
  void Reset() {
    std::lock_guard lock(mutex_);
    value_.reset();
  }

  mutable std::mutex mutex_;
  mutable std::optional<T> value_;
};

}  // namespace iowatch
