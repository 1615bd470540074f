#include "probes/engines/psync_engine.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace iowatch::probes {

Result<void> PsyncEngine::Open(const EngineTarget& target, uint32_t depth) {
  if (depth == 0) return MakeError(ErrorCode::kInvalidArgument, "psync engine: depth must be > 0");
  if (target.fd < 0) return MakeError(ErrorCode::kInvalidArgument, "psync engine: no descriptor");
  fd_ = target.fd;
  depth_ = depth;
  buffers_.assign(target.buffers.begin(), target.buffers.end());
  queued_.clear();
  queued_.reserve(depth);
  completed_.clear();
  completed_.reserve(depth);
  completed_begin_ = 0;
  return {};
}

Result<void> PsyncEngine::Queue(const IoRequest& request) {
  if (fd_ < 0) return MakeError(ErrorCode::kInvalidArgument, "psync engine: not open");
  if (queued_.size() + (completed_.size() - completed_begin_) >= depth_) {
    return MakeError(ErrorCode::kInvalidArgument, "psync engine: queue is full");
  }
  if (request.op != IoOp::kFsync && (request.buffer_index >= buffers_.size() ||
                                     request.length > buffers_[request.buffer_index].size())) {
    return MakeError(ErrorCode::kInvalidArgument, "psync engine: request does not fit its buffer");
  }
  queued_.push_back(request);
  return {};
}

int64_t PsyncEngine::Perform(const IoRequest& request) const {
  ssize_t done = 0;
  do {
    switch (request.op) {
      case IoOp::kRead:
        done = pread(fd_, buffers_[request.buffer_index].data(), request.length,
                     static_cast<off_t>(request.offset));
        break;
      case IoOp::kWrite:
        done = pwrite(fd_, buffers_[request.buffer_index].data(), request.length,
                      static_cast<off_t>(request.offset));
        break;
      case IoOp::kFsync:
        done = fsync(fd_);
        break;
    }
  } while (done < 0 && errno == EINTR);
  return done < 0 ? -static_cast<int64_t>(errno) : static_cast<int64_t>(done);
}

Result<uint32_t> PsyncEngine::Submit() {
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

Result<size_t> PsyncEngine::Reap(size_t /*min*/, std::span<IoCompletion> out,
                                 std::chrono::nanoseconds /*timeout*/) {
  // Everything submitted has completed already: waiting could only add the
  // timeout to the measurement.
  const size_t n = std::min(out.size(), completed_.size() - completed_begin_);
  std::copy_n(completed_.begin() + static_cast<std::ptrdiff_t>(completed_begin_), n, out.begin());
  completed_begin_ += n;
  return n;
}

void PsyncEngine::Close() noexcept {
  fd_ = -1;
  depth_ = 0;
  buffers_.clear();
  queued_.clear();
  completed_.clear();
  completed_begin_ = 0;
}

}  // namespace iowatch::probes
