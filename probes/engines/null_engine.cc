#include "probes/engines/null_engine.h"

#include <algorithm>

namespace iowatch::probes {

Status NullEngine::DoOpen(const EngineTarget& /*target*/, uint32_t /*depth*/) {
  queued_.clear();
  completed_.clear();
  history_.clear();
  return {};
}

Status NullEngine::DoQueue(const IoRequest& request) {
  queued_.push_back(request);
  if (keep_history_) history_.push_back(request);
  return {};
}

Result<uint32_t> NullEngine::DoSubmit() {
  const auto started = static_cast<uint32_t>(queued_.size());
  for (const IoRequest& request : queued_) {
    completed_.push_back({request.tag, static_cast<int64_t>(request.length)});
  }
  queued_.clear();
  return started;
}

Result<size_t> NullEngine::DoReap(size_t /*min*/, std::span<IoCompletion> out,
                                  std::chrono::nanoseconds /*timeout*/) {
  const size_t n = std::min(out.size(), completed_.size());
  std::copy_n(completed_.begin(), n, out.begin());
  completed_.erase(completed_.begin(), completed_.begin() + static_cast<std::ptrdiff_t>(n));
  return n;
}

void NullEngine::DoClose() noexcept {
  queued_.clear();
  completed_.clear();
}

}  // namespace iowatch::probes
