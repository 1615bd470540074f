// The I/O engine seam, shaped like fio's ioengine_ops (queue / commit /
// getevents): an engine moves bytes and nothing else. Offsets, pacing,
// runtime, timestamps and statistics belong to JobRunner, so every engine is
// measured the same way.
// Life cycle: Open once, then any number of Queue → Submit → Reap rounds,
// then Close. Queue never blocks and never starts I/O for asynchronous
// engines; Submit starts everything queued. Synchronous engines (psync, null)
// perform the I/O inside Submit and their completions are ready for Reap at
// once; IsSynchronous() tells the runner not to record slat for them, as fio
// does for sync engines.
// An engine that cannot do what the job asked but can still measure (buffers
// not registered, a setup flag the kernel lacks) says so through
// Fallbacks(): the runner copies them into the result, so a run never
// changes what it measures silently.
// Thread-safety: an engine belongs to one thread (one ring per run).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "probes/engines/abandoned_io.h"
#include "probes/spec/job_spec.h"

namespace iowatch::probes {

enum class IoOp : uint8_t { kRead, kWrite, kFsync };

struct IoRequest {
  IoOp op = IoOp::kRead;
  uint64_t offset = 0;        // bytes from the start of the file or device
  uint32_t length = 0;        // bytes; 0 for kFsync
  uint32_t buffer_index = 0;  // which of the registered buffers to use
  uint64_t tag = 0;           // returned unchanged in the completion
};

struct IoCompletion {
  uint64_t tag = 0;
  int64_t result = 0;  // bytes transferred (may be short), or -errno
};

// What an engine works on: an open descriptor and the I/O buffers, all
// allocated and aligned by the caller (registered with the kernel by engines
// that can).
struct EngineTarget {
  int fd = -1;
  std::span<const std::span<std::byte>> buffers;
};

// Something the engine gave up at Open and how it runs instead.
struct EngineFallback {
  std::string name;    // what was given up, short and stable (a metric label): "fixedbufs"
  std::string reason;  // what refused it and what the run does instead, for people
  bool operator==(const EngineFallback&) const = default;
};

// The public steps are fio's td_io_queue: the checks every engine needs
// (open, depth, room in the queue, a request that fits its buffer) run here,
// once, and then the engine's own step (DoOpen, DoQueue...), which may assume
// them.
class ProbeEngine {
 public:
  virtual ~ProbeEngine() = default;

  // Prepares for at most `depth` I/Os in flight (a second Open closes the
  // first). io_uring refused by the kernel (EPERM, ENOSYS,
  // io_uring_disabled) is an error with code kUnsupported whose message
  // suggests --ioengine=psync.
  Status Open(const EngineTarget& target, uint32_t depth);
  // Adds one request to the next Submit; fails if `depth` are already queued
  // or in flight (not yet reaped), or the request does not fit its buffer.
  Status Queue(const IoRequest& request);
  // Starts every queued request; returns how many were started.
  Result<uint32_t> Submit();
  // Waits until at least `min` completions are available or `timeout` passes,
  // then moves up to out.size() completions into `out`; returns how many.
  Result<size_t> Reap(size_t min, std::span<IoCompletion> out, std::chrono::nanoseconds timeout);
  // Waits a bounded time for I/O still in flight. What does not complete
  // by then is abandoned: the engine leaks what the kernel may still write
  // to (its ring) instead of freeing it, and AbandonedIos says how many.
  void Close() noexcept;
  // I/Os the last Close gave up on; the caller must then never free or
  // reuse the buffers it gave Open until they completed (TakeAbandoned).
  virtual uint32_t AbandonedIos() const { return 0; }
  // After a Close that gave up: the context the abandoned I/Os live in, for
  // the caller to poll until they complete (null when none, or when taken
  // already). Not taken, it is leaked to the process's end.
  virtual std::unique_ptr<AbandonedIo> TakeAbandoned() { return nullptr; }

  virtual bool IsSynchronous() const = 0;
  virtual std::string_view Name() const = 0;
  // What the last Open gave up, in the order it happened; empty when the
  // engine runs as asked. Kept after Close, until the next Open.
  virtual std::span<const EngineFallback> Fallbacks() const { return {}; }

 protected:
  // The buffers Open was given, by IoRequest::buffer_index.
  std::span<const std::span<std::byte>> Buffers() const { return buffers_; }
  // The most I/Os in flight the engine can take (io_uring: its ring's).
  virtual uint32_t MaxDepth() const { return std::numeric_limits<uint32_t>::max(); }
  // False for an engine that moves no data (null): it needs neither a
  // descriptor nor buffers.
  virtual bool MovesData() const { return true; }

 private:
  // The engine's own steps, called only as the public ones say: DoOpen with
  // a depth in 1..MaxDepth() (and a descriptor when MovesData()), DoQueue
  // with room for the request and a buffer it fits, the others while open.
  virtual Status DoOpen(const EngineTarget& target, uint32_t depth) = 0;
  virtual Status DoQueue(const IoRequest& request) = 0;
  virtual Result<uint32_t> DoSubmit() = 0;
  virtual Result<size_t> DoReap(size_t min, std::span<IoCompletion> out,
                                std::chrono::nanoseconds timeout) = 0;
  // Idempotent: called on an engine never opened, or already closed.
  virtual void DoClose() noexcept = 0;

  // "<engine> engine: <what>", kInvalidArgument: a caller's mistake.
  std::unexpected<Error> Misuse(std::string_view what) const;

  bool open_ = false;
  uint32_t depth_ = 0;
  uint32_t outstanding_ = 0;  // queued, or submitted and not yet reaped
  std::vector<std::span<std::byte>> buffers_;
};

// The error an engine's Open returns when the kernel refuses the engine
// itself: code kUnsupported, "<engine> is not available (<reason>); use
// --ioengine=psync", and the errno.
std::unexpected<Error> EngineUnavailable(std::string_view engine, std::string_view reason, int err);

// The engine for `kind`, not yet opened; `uring` configures io_uring (the
// other engines have no options).
std::unique_ptr<ProbeEngine> MakeEngine(EngineKind kind, const IoUringOptions& uring = {});

// The engines whose requests are in flight together (not IsSynchronous:
// io_uring, libaio), in Engines()' order: what an asynchronous replay takes.
std::vector<EngineKind> AsynchronousEngines();

}  // namespace iowatch::probes
