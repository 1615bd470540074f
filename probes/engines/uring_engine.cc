#include "probes/engines/uring_engine.h"

#include <liburing.h>
#include <sys/resource.h>
#include <sys/uio.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "common/file_tree.h"
#include "common/leak_on_purpose.h"
#include "probes/engines/engine_waits.h"

namespace iowatch::probes {
namespace {

// IORING_MAX_ENTRIES in the kernel.
constexpr uint32_t kMaxEntries = 32768;
// user_data of the cancel request Close issues; never a caller's completion,
// and not liburing's LIBURING_UDATA_TIMEOUT (~0) either.
constexpr uint64_t kCancelTag = ~uint64_t{0} - 1;
static_assert(kCancelTag != LIBURING_UDATA_TIMEOUT);

// kernel.io_uring_disabled (Linux ≥ 6.6): 0 allowed, 1 only for
// CAP_SYS_ADMIN or kernel.io_uring_group, 2 refused for everyone. Read from
// the real /proc, not an injected root: it explains why this kernel just
// refused this process, as /proc/self does for iowatch's own metrics.
int IoUringDisabledSysctl() {
  const auto text = ReadFile("/proc/sys/kernel/io_uring_disabled");
  return text && !text->empty() && (*text)[0] >= '0' && (*text)[0] <= '2' ? (*text)[0] - '0' : 0;
}

}  // namespace

UringEngine::UringEngine(IoUringOptions options, uint32_t refused_setup_flags,
                         uint32_t hidden_features)
    : options_(options),
      refused_setup_flags_(refused_setup_flags),
      hidden_features_(hidden_features) {}
namespace {

// A ring a hung device still holds I/Os in: unregistered and exited once
// they completed.
class AbandonedRing final : public AbandonedIo {
 public:
  AbandonedRing(std::unique_ptr<io_uring> ring, uint32_t in_flight, bool fixed_buffers,
                bool fixed_file)
      : ring_(std::move(ring)),
        in_flight_(in_flight),
        fixed_buffers_(fixed_buffers),
        fixed_file_(fixed_file) {}
  ~AbandonedRing() override {
    if (in_flight_ > 0) {
      LeakOnPurpose(ring_.release());  // the kernel may still write to it
      return;
    }
    if (fixed_buffers_) io_uring_unregister_buffers(ring_.get());
    if (fixed_file_) io_uring_unregister_files(ring_.get());
    io_uring_queue_exit(ring_.get());
  }
  uint32_t Poll() noexcept override {
    io_uring_cqe* cqe = nullptr;
    while (in_flight_ > 0 && io_uring_peek_cqe(ring_.get(), &cqe) == 0 && cqe != nullptr) {
      if (io_uring_cqe_get_data64(cqe) != kCancelTag) --in_flight_;
      io_uring_cqe_seen(ring_.get(), cqe);
    }
    return in_flight_;
  }

 private:
  std::unique_ptr<io_uring> ring_;
  uint32_t in_flight_;
  bool fixed_buffers_;
  bool fixed_file_;
};

}  // namespace

UringEngine::~UringEngine() { DoClose(); }

uint32_t UringEngine::MaxDepth() const { return kMaxEntries; }

Status UringEngine::DoOpen(const EngineTarget& target, uint32_t depth) {
  fallbacks_.clear();
  if (auto ok = SetUpRing(std::bit_ceil(depth)); !ok) return ok;
  fd_ = target.fd;
  // fio: "sqthread submission requires registered files" (Linux < 5.11).
  if (options_.registerfiles || options_.sqthread_poll) RegisterFile();
  if (options_.fixedbufs) RegisterBuffers();
  return {};
}

Status UringEngine::SetUpRing(uint32_t entries) {
  const int disabled = IoUringDisabledSysctl();
  if (disabled >= 2)
    return EngineUnavailable(Name(), "disabled by the sysctl kernel.io_uring_disabled=2", EPERM);
  // SUBMIT_ALL (5.18) keeps submitting after a request fails at submission,
  // so Submit starts the whole batch; older kernels reject the flag.
  uint32_t flags = IORING_SETUP_SUBMIT_ALL;
  if (options_.hipri) flags |= IORING_SETUP_IOPOLL;
  if (options_.sqthread_poll) flags |= IORING_SETUP_SQPOLL;
  auto ring = std::make_unique<io_uring>();
  io_uring_params params{};
  const auto init = [&] {
    params = io_uring_params{};
    params.flags = flags;
    if ((flags & refused_setup_flags_) != 0) return -EINVAL;
    return io_uring_queue_init_params(entries, ring.get(), &params);
  };
  int ret = init();
  if (ret == -EINVAL) {
    flags &= ~IORING_SETUP_SUBMIT_ALL;
    ret = init();
    if (ret == 0) {
      fallbacks_.push_back(
          {"submit_all",
           "the kernel refused IORING_SETUP_SUBMIT_ALL (Linux < 5.18); a submission stops at "
           "the first request that fails to submit, the rest are submitted next time"});
    }
  }
  if (ret == -ENOSYS)
    return EngineUnavailable(Name(), "the kernel was built without io_uring", ENOSYS);
  if (ret == -EPERM) {
    return EngineUnavailable(
        Name(),
        disabled == 1 ? "the sysctl kernel.io_uring_disabled=1 limits it to "
                        "members of kernel.io_uring_group"
        : options_.sqthread_poll
            ? "refused with EPERM: sqthread_poll needs CAP_SYS_ADMIN before Linux "
              "5.11, or a seccomp or container policy forbids io_uring"
            : "refused with EPERM, e.g. by a seccomp or container policy",
        EPERM);
  }
  if (ret < 0) return ErrnoError(-ret, "io_uring_queue_init", "");
  // Without EXT_ARG (Linux < 5.11) liburing implements a wait with a timeout
  // by queueing its own timeout request (user_data LIBURING_UDATA_TIMEOUT)
  // and flushing the requests queued so far: completions the runner never
  // asked for, in a ring it counts. Refused rather than half-working.
  if ((params.features & ~hidden_features_ & IORING_FEAT_EXT_ARG) == 0) {
    io_uring_queue_exit(ring.get());
    return EngineUnavailable(
        Name(), "the kernel lacks IORING_FEAT_EXT_ARG, Linux 5.11 or newer is needed", ENOSYS);
  }
  ring_ = std::move(ring);
  cqes_.resize(params.cq_entries);
  return {};
}

// fio fails the job when registration fails; iowatch measures on with the
// plain descriptor (one fget/fput more per I/O) and says so.
void UringEngine::RegisterFile() {
  const int ret = io_uring_register_files(ring_.get(), &fd_, 1);
  fixed_file_ = ret == 0;
  if (fixed_file_) return;
  fallbacks_.push_back(
      {"registerfiles",
       fmt::format("registering the file{} failed: {}; using the plain descriptor",
                   options_.registerfiles ? "" : " (sqthread_poll implies registerfiles)",
                   ErrnoText(-ret))});
}

// fio fails the job here too ("io_queue_init: Cannot allocate memory");
// unregistered buffers work the same, only pinned per request, so iowatch
// measures on and says why.
void UringEngine::RegisterBuffers() {
  fixed_buffers_ = false;
  if (Buffers().empty()) return;
  std::vector<iovec> iovecs;
  iovecs.reserve(Buffers().size());
  size_t bytes = 0;
  for (const std::span<std::byte> buffer : Buffers()) {
    iovecs.push_back({buffer.data(), buffer.size()});
    bytes += buffer.size();
  }
  const int ret =
      io_uring_register_buffers(ring_.get(), iovecs.data(), static_cast<unsigned>(iovecs.size()));
  if (ret == 0) {
    fixed_buffers_ = true;
    return;
  }
  // Registration pins the pages and, without CAP_IPC_LOCK, charges them to
  // RLIMIT_MEMLOCK (ENOMEM when over it).
  std::string reason;
  if (ret == -ENOMEM) {
    rlimit limit{};
    getrlimit(RLIMIT_MEMLOCK, &limit);
    reason = fmt::format(
        "registering {} bytes of buffers failed with ENOMEM (RLIMIT_MEMLOCK is {} bytes); "
        "using unregistered buffers",
        bytes, limit.rlim_cur);
  } else {
    reason = fmt::format("registering {} buffers failed: {}; using unregistered buffers",
                         Buffers().size(), ErrnoText(-ret));
  }
  fallbacks_.push_back({"fixedbufs", std::move(reason)});
}

Status UringEngine::DoQueue(const IoRequest& request) {
  io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
  // The ring has at least `depth` entries, so this only fails on a bug.
  if (sqe == nullptr) return MakeError(ErrorCode::kIo, "io_uring engine: submission queue full");
  const int file = fixed_file_ ? 0 : fd_;  // index into the registered files
  std::byte* data = request.op == IoOp::kFsync ? nullptr : Buffers()[request.buffer_index].data();
  const auto index = static_cast<int>(request.buffer_index);
  switch (request.op) {
    case IoOp::kRead:
      if (fixed_buffers_) {
        io_uring_prep_read_fixed(sqe, file, data, request.length, request.offset, index);
      } else {
        io_uring_prep_read(sqe, file, data, request.length, request.offset);
      }
      break;
    case IoOp::kWrite:
      if (fixed_buffers_) {
        io_uring_prep_write_fixed(sqe, file, data, request.length, request.offset, index);
      } else {
        io_uring_prep_write(sqe, file, data, request.length, request.offset);
      }
      break;
    case IoOp::kFsync:
      io_uring_prep_fsync(sqe, file, 0);
      break;
  }
  if (fixed_file_) sqe->flags |= IOSQE_FIXED_FILE;
  io_uring_sqe_set_data64(sqe, request.tag);
  ++queued_;
  return {};
}

Result<uint32_t> UringEngine::DoSubmit() {
  if (queued_ == 0) return 0u;
  int ret = 0;
  do {
    ret = io_uring_submit(ring_.get());
  } while (ret == -EINTR);
  if (ret < 0) return ErrnoError(-ret, "io_uring_submit", "");
  // Entries the kernel did not take stay in the ring for the next Submit.
  const uint32_t started = std::min(static_cast<uint32_t>(ret), queued_);
  queued_ -= started;
  in_flight_ += started;
  return started;
}

Result<size_t> UringEngine::DoReap(size_t min, std::span<IoCompletion> out,
                                   std::chrono::nanoseconds timeout) {
  // Waiting for more than can ever complete would only sleep out the timeout.
  const size_t want = std::min({min, out.size(), static_cast<size_t>(in_flight_)});
  timeout = std::clamp(timeout, std::chrono::nanoseconds::zero(), kLongestWait);
  if (want > 0 && io_uring_cq_ready(ring_.get()) < want && timeout > timeout.zero()) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= left.zero()) break;
      __kernel_timespec ts = ToTimespec<__kernel_timespec>(left);
      io_uring_cqe* cqe = nullptr;
      const int ret =
          io_uring_wait_cqes(ring_.get(), &cqe, static_cast<unsigned>(want), &ts, nullptr);
      if (ret == -EINTR) continue;  // a signal: wait out the rest of the timeout
      // -ETIME: the timeout passed; what is ready is returned below.
      if (ret < 0 && ret != -ETIME) return ErrnoError(-ret, "io_uring_wait_cqes", "");
      break;
    }
  }
  size_t reaped = 0;
  while (reaped < out.size()) {
    const auto batch = static_cast<unsigned>(std::min(out.size() - reaped, cqes_.size()));
    const unsigned n = io_uring_peek_batch_cqe(ring_.get(), cqes_.data(), batch);
    if (n == 0) break;
    for (unsigned i = 0; i < n; ++i) {
      out[reaped + i] = {io_uring_cqe_get_data64(cqes_[i]), cqes_[i]->res};
    }
    io_uring_cq_advance(ring_.get(), n);
    reaped += n;
  }
  in_flight_ -= static_cast<uint32_t>(std::min<size_t>(reaped, in_flight_));
  return reaped;
}

void UringEngine::DrainInFlight() noexcept {
  // Requests never submitted are dropped with the ring, unless the cancel
  // below would submit them: turn them into no-ops first.
  io_uring* ring = ring_.get();
  for (unsigned i = ring->sq.sqe_head; i != ring->sq.sqe_tail; ++i) {
    io_uring_sqe* sqe = &ring->sq.sqes[i & ring->sq.ring_mask];
    const uint64_t tag = sqe->user_data;
    io_uring_prep_nop(sqe);
    io_uring_sqe_set_data64(sqe, tag);
  }
  in_flight_ += queued_;
  queued_ = 0;
  // IORING_ASYNC_CANCEL_ANY needs Linux 5.19; older kernels answer -EINVAL
  // and we just wait.
  if (io_uring_sqe* sqe = io_uring_get_sqe(ring); sqe != nullptr) {
    io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
    io_uring_sqe_set_data64(sqe, kCancelTag);
  }
  int ret = 0;
  do {
    ret = io_uring_submit(ring);
  } while (ret == -EINTR);
  const auto deadline = std::chrono::steady_clock::now() + kCloseDrainTimeout;
  while (in_flight_ > 0) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= left.zero()) break;
    __kernel_timespec ts = ToTimespec<__kernel_timespec>(left);
    io_uring_cqe* cqe = nullptr;
    ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
    if (ret == -EINTR) continue;
    if (ret < 0) break;
    if (io_uring_cqe_get_data64(cqe) != kCancelTag) --in_flight_;
    io_uring_cqe_seen(ring, cqe);
  }
}

void UringEngine::DoClose() noexcept {
  if (!ring_) return;
  abandoned_ = 0;
  abandoned_ring_.reset();  // an earlier run's, never taken: leaked by its destructor
  if (in_flight_ > 0) DrainInFlight();
  if (in_flight_ > 0) {
    // A hung device (a SCSI or NVMe reset, multipath queue_if_no_path) may
    // complete these much later, into the buffers: unregistering would block
    // without bound on some kernels, and exiting the ring frees nothing the
    // kernel still writes to anyway. The ring goes to whoever takes it
    // (TakeAbandoned), to be exited once they completed, and the caller
    // keeps the buffers till then.
    abandoned_ = in_flight_;
    abandoned_ring_ =
        std::make_unique<AbandonedRing>(std::move(ring_), in_flight_, fixed_buffers_, fixed_file_);
  } else {
    if (fixed_buffers_) io_uring_unregister_buffers(ring_.get());
    if (fixed_file_) io_uring_unregister_files(ring_.get());
    io_uring_queue_exit(ring_.get());
    ring_.reset();
  }
  fd_ = -1;
  queued_ = 0;
  in_flight_ = 0;
  fixed_buffers_ = false;
  fixed_file_ = false;
}

}  // namespace iowatch::probes
