#include "probes/engines/engine.h"

#include <fmt/format.h>

#include <algorithm>

namespace iowatch::probes {

std::unexpected<Error> ProbeEngine::Misuse(std::string_view what) const {
  return MakeError(ErrorCode::kInvalidArgument, fmt::format("{} engine: {}", Name(), what));
}

Status ProbeEngine::Open(const EngineTarget& target, uint32_t depth) {
  if (depth == 0) return Misuse("depth must be > 0");
  if (depth > MaxDepth()) return Misuse(fmt::format("depth must be 1..{}", MaxDepth()));
  if (MovesData() && target.fd < 0) return Misuse("no descriptor");
  Close();                                                        // a second Open starts afresh
  buffers_.assign(target.buffers.begin(), target.buffers.end());  // DoOpen may register them
  if (auto opened = DoOpen(target, depth); !opened) {
    buffers_.clear();
    return opened;
  }
  open_ = true;
  depth_ = depth;
  return {};
}

Status ProbeEngine::Queue(const IoRequest& request) {
  if (!open_) return Misuse("not open");
  if (outstanding_ >= depth_) return Misuse("queue is full");
  if (MovesData() && request.op != IoOp::kFsync &&
      (request.buffer_index >= buffers_.size() ||
       request.length > buffers_[request.buffer_index].size())) {
    return Misuse("request does not fit its buffer");
  }
  auto queued = DoQueue(request);
  if (queued) ++outstanding_;
  return queued;
}

Result<uint32_t> ProbeEngine::Submit() {
  if (!open_) return Misuse("not open");
  return DoSubmit();
}

Result<size_t> ProbeEngine::Reap(size_t min, std::span<IoCompletion> out,
                                 std::chrono::nanoseconds timeout) {
  if (!open_) return Misuse("not open");
  auto reaped = DoReap(min, out, timeout);
  if (reaped) outstanding_ -= std::min<uint32_t>(outstanding_, static_cast<uint32_t>(*reaped));
  return reaped;
}

void ProbeEngine::Close() noexcept {
  DoClose();  // idempotent: also after an Open that failed half way
  open_ = false;
  outstanding_ = 0;
  buffers_.clear();
}

}  // namespace iowatch::probes
