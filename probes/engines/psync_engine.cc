#include "probes/engines/psync_engine.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace iowatch::probes {

Status PsyncEngine::DoOpen(const EngineTarget& target, uint32_t depth) {
  fd_ = target.fd;
  queued_.clear();
  queued_.reserve(depth);
  completed_.clear();
  completed_.reserve(depth);
  completed_begin_ = 0;
  return {};
}

Status PsyncEngine::DoQueue(const IoRequest& request) {
  queued_.push_back(request);
  return {};
}

int64_t PsyncEngine::Perform(const IoRequest& request) const {
  ssize_t done = 0;
  do {
    switch (request.op) {
      case IoOp::kRead:
        done = pread(fd_, Buffers()[request.buffer_index].data(), request.length,
                     static_cast<off_t>(request.offset));
        break;
      case IoOp::kWrite:
        done = pwrite(fd_, Buffers()[request.buffer_index].data(), request.length,
                      static_cast<off_t>(request.offset));
        break;
      case IoOp::kFsync:
        done = fsync(fd_);
        break;
    }
  } while (done < 0 && errno == EINTR);
  return done < 0 ? -static_cast<int64_t>(errno) : static_cast<int64_t>(done);
}

Result<uint32_t> PsyncEngine::DoSubmit() {
  // Compact the reaped prefix here rather than in Reap, so Reap stays O(n)
  // in what it returns.
  completed_.erase(completed_.begin(),
                   completed_.begin() + static_cast<std::ptrdiff_t>(completed_begin_));
  completed_begin_ = 0;
  for (const IoRequest& request : queued_) completed_.push_back({request.tag, Perform(request)});
  const auto started = static_cast<uint32_t>(queued_.size());
  queued_.clear();
  return started;
}

Result<size_t> PsyncEngine::DoReap(size_t /*min*/, std::span<IoCompletion> out,
                                   std::chrono::nanoseconds /*timeout*/) {
  // Everything submitted has completed already: waiting could only add the
  // timeout to the measurement.
  const size_t n = std::min(out.size(), completed_.size() - completed_begin_);
  std::copy_n(completed_.begin() + static_cast<std::ptrdiff_t>(completed_begin_), n, out.begin());
  completed_begin_ += n;
  return n;
}

void PsyncEngine::DoClose() noexcept {
  fd_ = -1;
  queued_.clear();
  completed_.clear();
  completed_begin_ = 0;
}

}  // namespace iowatch::probes
