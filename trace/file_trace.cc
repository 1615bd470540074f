#include "trace/file_trace.h"

#include <algorithm>
#include <bit>

namespace iowatch::trace {

std::string_view ToString(TraceCall call) {
  static constexpr std::array<std::string_view, kTraceCallCount> kNames{"open", "read",  "write",
                                                                        "seek", "fsync", "close"};
  return kNames[static_cast<size_t>(call)];
}

std::string_view ToString(Direction direction) {
  return direction == Direction::kRead ? "read" : "write";
}

std::string_view ToString(Access access) {
  static constexpr std::array<std::string_view, kAccessCount> kNames{"sequential", "backward",
                                                                     "random"};
  return kNames[static_cast<size_t>(access)];
}

size_t SizeBucket(uint64_t request_bytes) {
  if (request_bytes < 2) return 0;
  const auto bucket = static_cast<size_t>(std::bit_width(request_bytes) - 1);
  return std::min(bucket, kSizeBuckets - 1);
}

uint64_t SizeBucketLow(size_t bucket) { return bucket == 0 ? 0 : uint64_t{1} << bucket; }

Access Classify(const Cursor& cursor, uint64_t offset, uint64_t length) {
  if (!cursor.has_previous) return offset == 0 ? Access::kSequential : Access::kRandom;
  if (offset == cursor.previous_offset + cursor.previous_length) return Access::kSequential;
  if (offset + length == cursor.previous_offset && length != 0) return Access::kBackward;
  return Access::kRandom;
}

namespace {

void CountCall(CallTotals& totals, bool failed, uint64_t ns) {
  ++totals.calls;
  totals.ns += ns;
  if (failed) ++totals.errors;
}

void CountRequest(CallTotals& totals, uint64_t requested, uint64_t moved) {
  totals.requested_bytes += requested;
  totals.bytes += moved;
  totals.min_request =
      totals.min_request == 0 ? requested : std::min(totals.min_request, requested);
  totals.max_request = std::max(totals.max_request, requested);
}

void CountAccess(FileTrace& trace, Direction direction, Access access, uint64_t moved) {
  AccessTotals& totals = trace.access[static_cast<size_t>(direction)][static_cast<size_t>(access)];
  if (totals.first_seen == 0) totals.first_seen = ++trace.classes_seen;
  ++totals.requests;
  totals.bytes += moved;
}

}  // namespace

void RecordTransfer(FileTrace& trace, Cursor& cursor, Direction direction, uint64_t offset,
                    uint64_t requested, int64_t result, uint64_t ns) {
  const TraceCall call = direction == Direction::kRead ? TraceCall::kRead : TraceCall::kWrite;
  CallTotals& totals = trace.Call(call);
  CountCall(totals, result < 0, ns);
  if (result < 0) return;
  const auto moved = static_cast<uint64_t>(result);
  CountRequest(totals, requested, moved);
  trace.sizes[static_cast<size_t>(direction)][SizeBucket(requested)] += 1;
  const bool at_cursor = offset == kAtCursor;
  const bool appending = at_cursor && direction == Direction::kWrite && cursor.append;
  if (appending || (at_cursor && !cursor.position_known)) {
    // Appends are sequential by definition; elsewhere an unknown position
    // cannot be classified better than that either, and the write moved it
    // to a place only the kernel knows.
    CountAccess(trace, direction, Access::kSequential, moved);
    cursor.position_known = !appending && cursor.position_known;
    cursor.has_previous = false;
    return;
  }
  const uint64_t at = at_cursor ? cursor.position : offset;
  CountAccess(trace, direction, Classify(cursor, at, moved), moved);
  cursor.has_previous = true;
  cursor.previous_offset = at;
  cursor.previous_length = moved;
  trace.max_extent = std::max(trace.max_extent, at + moved);
  if (at_cursor) cursor.position += moved;
}

void RecordSeek(FileTrace& trace, Cursor& cursor, int64_t result, uint64_t ns) {
  CountCall(trace.Call(TraceCall::kSeek), result < 0, ns);
  if (result < 0) return;
  const auto position = static_cast<uint64_t>(result);
  if (cursor.position_known) {
    ++trace.seek_deltas;
    trace.seek_delta_sum += static_cast<int64_t>(position) - static_cast<int64_t>(cursor.position);
  }
  cursor.position = position;
  cursor.position_known = true;
}

void RecordCall(FileTrace& trace, TraceCall call, bool failed, uint64_t ns) {
  CountCall(trace.Call(call), failed, ns);
}

namespace {

void MergeCall(CallTotals& into, const CallTotals& from) {
  into.calls += from.calls;
  into.errors += from.errors;
  into.ns += from.ns;
  into.requested_bytes += from.requested_bytes;
  into.bytes += from.bytes;
  into.raced += from.raced;
  if (from.min_request != 0) {
    into.min_request =
        into.min_request == 0 ? from.min_request : std::min(into.min_request, from.min_request);
  }
  into.max_request = std::max(into.max_request, from.max_request);
}

}  // namespace

void MergeInto(FileTrace& into, const FileTrace& from) {
  into.opens += from.opens;
  if (from.opens != 0) into.open_flags = from.open_flags;
  into.block_device = into.block_device || from.block_device;
  into.size = from.opens != 0 ? from.size : into.size;
  into.max_extent = std::max(into.max_extent, from.max_extent);
  for (size_t c = 0; c < kTraceCallCount; ++c) MergeCall(into.calls[c], from.calls[c]);
  // from's classes in their order, each numbered after into's if new there.
  for (uint32_t order = 1; order <= from.classes_seen; ++order) {
    for (size_t d = 0; d < kDirectionCount; ++d) {
      for (size_t a = 0; a < kAccessCount; ++a) {
        const AccessTotals& source = from.access[d][a];
        if (source.first_seen != order) continue;
        AccessTotals& target = into.access[d][a];
        if (target.first_seen == 0) target.first_seen = ++into.classes_seen;
        target.requests += source.requests;
        target.bytes += source.bytes;
      }
    }
  }
  for (size_t d = 0; d < kDirectionCount; ++d) {
    for (size_t b = 0; b < kSizeBuckets; ++b) into.sizes[d][b] += from.sizes[d][b];
  }
  into.seek_deltas += from.seek_deltas;
  into.seek_delta_sum += from.seek_delta_sum;
}

void ScaleTimes(FileTrace& trace, double factor) {
  for (CallTotals& c : trace.calls)
    c.ns = static_cast<uint64_t>(static_cast<double>(c.ns) * factor);
}

std::string_view PatternOf(const FileTrace& trace, Direction direction) {
  const auto& access = trace.access[static_cast<size_t>(direction)];
  uint64_t total = 0;
  for (const AccessTotals& a : access) total += a.requests;
  if (total == 0) return "";
  for (size_t a = 0; a < kAccessCount; ++a) {
    if (access[a].requests * 2 > total) return ToString(static_cast<Access>(a));
  }
  return "mixed";
}

}  // namespace iowatch::trace
