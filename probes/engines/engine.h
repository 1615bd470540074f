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
#include <memory>
#include <span>
#include <string>

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

class ProbeEngine {
 public:
  virtual ~ProbeEngine() = default;

  // Prepares for at most `depth` I/Os in flight. io_uring refused by the
  // kernel (EPERM, ENOSYS, io_uring_disabled) is an error with code
  // kUnsupported whose message suggests --ioengine=psync.
  virtual Result<void> Open(const EngineTarget& target, uint32_t depth) = 0;
  // Adds one request to the next Submit; fails if `depth` are already queued
  // or in flight.
  virtual Result<void> Queue(const IoRequest& request) = 0;
  // Starts every queued request; returns how many were started.
  virtual Result<uint32_t> Submit() = 0;
  // Waits until at least `min` completions are available or `timeout` passes,
  // then moves up to out.size() completions into `out`; returns how many.
  virtual Result<size_t> Reap(size_t min, std::span<IoCompletion> out,
                              std::chrono::nanoseconds timeout) = 0;
  // Waits a bounded time for I/O still in flight. What does not complete
  // by then is abandoned: the engine leaks what the kernel may still write
  // to (its ring) instead of freeing it, and AbandonedIos says how many.
  virtual void Close() noexcept = 0;
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
};

// The error an engine's Open returns when the kernel refuses the engine
// itself: code kUnsupported, "<engine> is not available (<reason>); use
// --ioengine=psync", and the errno.
std::unexpected<Error> EngineUnavailable(std::string_view engine, std::string_view reason, int err);

// The engine for `kind`, not yet opened; `uring` configures io_uring (the
// other engines have no options).
std::unique_ptr<ProbeEngine> MakeEngine(EngineKind kind, const IoUringOptions& uring = {});

}  // namespace iowatch::probes
