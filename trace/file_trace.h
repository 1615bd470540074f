// What one process did to one file, as `iowatch trace` reports it (MIO's
// trace module on AIX is the model): per call kind its count, time and, for
// transfers, the bytes requested and moved and the smallest and largest
// request; per direction the request-size histogram and the access pattern,
// each request classified against the one before it on the same descriptor:
//   sequential  it starts where the previous one ended (the first request of
//               a descriptor: when it starts at 0, or appends)
//   backward    it ends where the previous one started (a file read from its
//               end towards its start)
//   random      anything else
// Times are in nanoseconds. RecordTransfer and friends are the one place a
// request is counted: the LD_PRELOAD library calls them for every call, the
// tests with made-up calls.
// Thread-safety: plain values and functions; the caller serialises updates
// of one FileTrace.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace iowatch::trace {

enum class TraceCall : uint8_t { kOpen, kRead, kWrite, kSeek, kFsync, kClose };
inline constexpr size_t kTraceCallCount = 6;
std::string_view ToString(TraceCall call);  // "open", "read", "write", "seek", "fsync", "close"

enum class Direction : uint8_t { kRead, kWrite };
inline constexpr size_t kDirectionCount = 2;
std::string_view ToString(Direction direction);  // "read", "write"

enum class Access : uint8_t { kSequential, kBackward, kRandom };
inline constexpr size_t kAccessCount = 3;
std::string_view ToString(Access access);  // "sequential", "backward", "random"

// Power-of-two request-size buckets: bucket 0 holds requests of 0 and 1
// byte, bucket k ≥ 1 those in [2^k, 2^(k+1)); the last holds everything from
// 2^(kSizeBuckets-1) (128 MiB) up.
inline constexpr size_t kSizeBuckets = 28;
size_t SizeBucket(uint64_t request_bytes);
uint64_t SizeBucketLow(size_t bucket);  // the smallest request the bucket holds (0 for bucket 0)

struct CallTotals {
  uint64_t calls = 0;
  uint64_t errors = 0;  // calls that returned -1
  uint64_t ns = 0;      // time spent in the calls, errors included
  // Transfers only (read, write): what the calls asked for and what they moved.
  uint64_t requested_bytes = 0;
  uint64_t bytes = 0;
  uint64_t min_request = 0;  // of the successful calls; 0 while there are none
  uint64_t max_request = 0;
  // Calls whose descriptor another thread closed or replaced while they ran:
  // counted as the file they were made on (a read in flight when another
  // thread closes is this file's; a program that put another file or pipe on
  // the number before the call reached the kernel made it theirs).
  uint64_t raced = 0;
  bool operator==(const CallTotals&) const = default;
};

struct AccessTotals {
  uint64_t requests = 0;
  uint64_t bytes = 0;  // moved
  // The order in which the file's (direction, access) classes first appeared,
  // from 1; 0 = never. The what-if replays the classes in this order.
  uint32_t first_seen = 0;
  bool operator==(const AccessTotals&) const = default;
};

struct FileTrace {
  uint32_t opens = 0;
  uint32_t open_flags = 0;  // the last open's flags (O_RDWR, O_DIRECT, ...)
  bool block_device = false;
  uint64_t size = 0;        // the file's size at its last close (fstat), or at exit
  uint64_t max_extent = 0;  // the largest offset + length a transfer reached
  std::array<CallTotals, kTraceCallCount> calls{};
  std::array<std::array<AccessTotals, kAccessCount>, kDirectionCount> access{};
  std::array<std::array<uint64_t, kSizeBuckets>, kDirectionCount> sizes{};
  // Seeks that moved the position from a known one: their count and the sum
  // of the distances (new - old), MIO's "average seek delta".
  uint64_t seek_deltas = 0;
  int64_t seek_delta_sum = 0;
  uint32_t classes_seen = 0;  // (direction, access) classes seen so far
  bool operator==(const FileTrace&) const = default;

  const CallTotals& Call(TraceCall call) const { return calls[static_cast<size_t>(call)]; }
  CallTotals& Call(TraceCall call) { return calls[static_cast<size_t>(call)]; }
};

// A descriptor's position, as far as the tracer knows it, and the request
// before (for the access pattern). Unknown after an O_APPEND write until a
// seek says where it is.
struct Cursor {
  uint64_t position = 0;
  bool position_known = true;
  bool append = false;  // opened with O_APPEND: writes go to the end
  bool has_previous = false;
  uint64_t previous_offset = 0;
  uint64_t previous_length = 0;
};

Access Classify(const Cursor& cursor, uint64_t offset, uint64_t length);

// A read or write of `requested` bytes at `offset` (nullopt-like: kAtCursor
// for read/write/readv/writev, which use and advance the cursor's position)
// that returned `result` (bytes moved, or -1) after `ns` nanoseconds.
inline constexpr uint64_t kAtCursor = UINT64_MAX;
void RecordTransfer(FileTrace& trace, Cursor& cursor, Direction direction, uint64_t offset,
                    uint64_t requested, int64_t result, uint64_t ns);

// lseek: `result` is the new position, or -1.
void RecordSeek(FileTrace& trace, Cursor& cursor, int64_t result, uint64_t ns);

// open, fsync/fdatasync, close: counted and timed.
void RecordCall(FileTrace& trace, TraceCall call, bool failed, uint64_t ns);

// Adds `from` (another open of the same file) into `into`: counts and times
// sum, extremes take the extreme, the latest open's flags and size win, and
// `from`'s classes not yet seen in `into` are numbered after `into`'s.
void MergeInto(FileTrace& into, const FileTrace& from);

// Multiplies every time by `factor`: the library counts TSC ticks in the
// hot path and converts once, at exit.
void ScaleTimes(FileTrace& trace, double factor);

// The direction's prevailing pattern: "sequential", "backward" or "random"
// when one holds more than half of the requests, "mixed" when none does,
// "" without requests.
std::string_view PatternOf(const FileTrace& trace, Direction direction);

}  // namespace iowatch::trace
