#include "probes/engines/aio_engine.h"

#include <libaio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "probes/engines/engine_waits.h"

namespace iowatch::probes {
namespace {

// An AIO context a hung device still holds I/Os in: io_destroy once they
// completed (it would wait for them without bound before).
class AbandonedAioContext final : public AbandonedIo {
 public:
  AbandonedAioContext(io_context_t context, uint32_t in_flight)
      : context_(context), in_flight_(in_flight), events_(in_flight) {}
  ~AbandonedAioContext() override {
    if (in_flight_ == 0) io_destroy(context_);  // else left to the process's end
  }
  uint32_t Poll() noexcept override {
    if (in_flight_ == 0) return 0;
    timespec now{};  // zero: what has arrived, no wait
    const int got = io_getevents(context_, 0, static_cast<long>(in_flight_), events_.data(), &now);
    if (got > 0) in_flight_ -= std::min(in_flight_, static_cast<uint32_t>(got));
    return in_flight_;
  }

 private:
  io_context_t context_;
  uint32_t in_flight_;
  std::vector<io_event> events_;
};

}  // namespace

AioEngine::AioEngine() = default;
AioEngine::~AioEngine() { DoClose(); }

Status AioEngine::DoOpen(const EngineTarget& target, uint32_t depth) {
  io_context_t context = nullptr;
  if (const int ret = io_setup(static_cast<int>(depth), &context); ret < 0) {
    if (ret == -ENOSYS)
      return EngineUnavailable(Name(), "the kernel has no AIO (CONFIG_AIO)", -ret);
    if (ret == -EAGAIN) {
      return EngineUnavailable(
          Name(),
          "every AIO slot of the system is in use: /proc/sys/fs/aio-nr reached fs.aio-max-nr",
          -ret);
    }
    return ErrnoError(-ret, "io_setup", "");
  }
  context_ = context;
  fd_ = target.fd;
  abandoned_ = 0;
  abandoned_context_.reset();
  iocbs_.assign(depth, iocb{});
  tags_.assign(depth, 0);
  free_.resize(depth);
  for (uint32_t i = 0; i < depth; ++i) free_[i] = depth - 1 - i;  // slot 0 first
  queued_.clear();
  queued_.reserve(depth);
  in_flight_ = 0;
  return {};
}

Status AioEngine::DoQueue(const IoRequest& request) {
  const uint32_t slot = free_.back();
  free_.pop_back();
  iocb* cb = &iocbs_[slot];
  switch (request.op) {
    case IoOp::kRead:
      io_prep_pread(cb, fd_, Buffers()[request.buffer_index].data(), request.length,
                    static_cast<long long>(request.offset));
      break;
    case IoOp::kWrite:
      io_prep_pwrite(cb, fd_, Buffers()[request.buffer_index].data(), request.length,
                     static_cast<long long>(request.offset));
      break;
    case IoOp::kFsync:
      io_prep_fsync(cb, fd_);
      break;
  }
  cb->data = &tags_[slot];
  tags_[slot] = request.tag;
  queued_.push_back(cb);
  return {};
}

Result<uint32_t> AioEngine::DoSubmit() {
  uint32_t started = 0;
  uint32_t refused = 0;
  while (started < queued_.size()) {
    const int ret =
        io_submit(context_, static_cast<long>(queued_.size() - started), queued_.data() + started);
    if (ret == -EINTR) continue;
    if (ret == -EAGAIN || ret == 0) break;  // out of requests: the rest waits for a reap
    if (ret < 0) {
      // The kernel refused the first iocb (EBADF, EINVAL, ...): its
      // completion carries the error, as io_uring's would, and the rest go on.
      const auto* tag = static_cast<uint64_t*>(queued_[started]->data);
      refused_.push_back({*tag, ret});
      free_.push_back(static_cast<uint32_t>(tag - tags_.data()));
      ++started;
      ++refused;
      continue;
    }
    started += static_cast<uint32_t>(ret);
  }
  queued_.erase(queued_.begin(), queued_.begin() + started);
  in_flight_ += started - refused;
  return started;
}

int AioEngine::GetEvents(size_t min, size_t max_events, std::chrono::nanoseconds timeout,
                         std::span<IoCompletion> out) {
  io_event events[64];
  max_events = std::min({max_events, out.size(), std::size(events)});
  min = std::min(min, max_events);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int got = 0;
  for (;;) {
    const auto left = std::max(deadline - std::chrono::steady_clock::now(),
                               std::chrono::steady_clock::duration::zero());
    timespec ts = ToTimespec<timespec>(left);
    got =
        io_getevents(context_, static_cast<long>(min), static_cast<long>(max_events), events, &ts);
    if (got != -EINTR || left == left.zero()) break;  // a signal: wait out the rest
  }
  if (got < 0) return got == -EINTR ? 0 : got;
  for (int i = 0; i < got; ++i) {
    auto* tag = static_cast<uint64_t*>(events[i].data);
    const auto slot = static_cast<uint32_t>(tag - tags_.data());
    // res is the bytes transferred, or -errno, in an unsigned long.
    out[static_cast<size_t>(i)] = {*tag, static_cast<int64_t>(static_cast<long>(events[i].res))};
    free_.push_back(slot);
  }
  in_flight_ -= static_cast<uint32_t>(got);
  return got;
}

Result<size_t> AioEngine::DoReap(size_t min, std::span<IoCompletion> out,
                                 std::chrono::nanoseconds timeout) {
  // Waiting for more than can ever complete would only sleep out the timeout.
  const size_t want = std::min({min, out.size(), in_flight_ + refused_.size()});
  timeout = std::clamp(timeout, std::chrono::nanoseconds::zero(), kLongestWait);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t reaped = std::min(out.size(), refused_.size());
  std::copy_n(refused_.begin(), reaped, out.begin());
  refused_.erase(refused_.begin(), refused_.begin() + static_cast<std::ptrdiff_t>(reaped));
  // io_getevents takes at most 64 at a time here: a larger `min` takes rounds.
  while (reaped < out.size() && in_flight_ > 0) {
    const auto left = std::max<std::chrono::nanoseconds>(
        deadline - std::chrono::steady_clock::now(), std::chrono::nanoseconds::zero());
    const int got =
        GetEvents(want > reaped ? want - reaped : 0, in_flight_, left, out.subspan(reaped));
    if (got < 0) return ErrnoError(-got, "io_getevents", "");
    reaped += static_cast<size_t>(got);
    if (got == 0 || reaped >= want) break;
  }
  return reaped;
}

void AioEngine::DrainInFlight() noexcept {
  for (iocb& cb : iocbs_) {
    io_event result{};
    (void)io_cancel(context_, &cb, &result);  // direct I/O cannot be cancelled: mostly EINVAL
  }
  const auto deadline = std::chrono::steady_clock::now() + kCloseDrainTimeout;
  std::vector<IoCompletion> sink(64);
  while (in_flight_ > 0) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= left.zero()) break;
    if (GetEvents(1, in_flight_, left, sink) < 0) break;
  }
}

void AioEngine::DoClose() noexcept {
  if (context_ == nullptr) return;
  queued_.clear();  // never submitted: nothing of them is in the kernel
  refused_.clear();
  if (in_flight_ > 0) DrainInFlight();
  if (in_flight_ > 0) {
    // io_destroy waits for every request still in flight, without bound on
    // a hung device: the context goes to whoever takes it (TakeAbandoned),
    // to be destroyed once they completed (the kernel copied the iocbs at
    // submission), and the caller keeps the buffers till then.
    abandoned_ = in_flight_;
    abandoned_context_ = std::make_unique<AbandonedAioContext>(context_, in_flight_);
  } else {
    io_destroy(context_);
  }
  context_ = nullptr;
  fd_ = -1;
  in_flight_ = 0;
  iocbs_.clear();
  tags_.clear();
  free_.clear();
}

}  // namespace iowatch::probes
