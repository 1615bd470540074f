#include "trace/process_trace.h"

#include <fcntl.h>

#include <array>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <utility>

namespace iowatch::trace {
namespace {

// printf into a std::string: the library cannot bring {fmt} into the
// programs it traces.
__attribute__((format(printf, 2, 3))) void Append(std::string& out, const char* format, ...) {
  std::array<char, 512> buffer{};
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buffer.data(), buffer.size(), format, args);
  va_end(args);
  if (n <= 0) return;
  if (static_cast<size_t>(n) < buffer.size()) {
    out.append(buffer.data(), static_cast<size_t>(n));
    return;
  }
  std::string long_text(static_cast<size_t>(n) + 1, '\0');
  va_start(args, format);
  (void)std::vsnprintf(long_text.data(), long_text.size(), format, args);
  va_end(args);
  long_text.resize(static_cast<size_t>(n));
  out += long_text;
}

double Seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

// "64K" for 65536: the histogram's bucket bounds.
std::string BinarySize(uint64_t bytes) {
  static constexpr std::array<const char*, 4> kUnits{"", "K", "M", "G"};
  size_t unit = 0;
  while (unit + 1 < kUnits.size() && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  std::string text;
  Append(text, "%" PRIu64 "%s", bytes, kUnits[unit]);
  return text;
}

void AppendCallLine(std::string& out, const FileTrace& trace, TraceCall call) {
  const CallTotals& c = trace.Call(call);
  Append(out, "%-8s %10" PRIu64 " %12.6f %8" PRIu64, std::string(ToString(call)).c_str(), c.calls,
         Seconds(c.ns), c.errors);
  if (call == TraceCall::kRead || call == TraceCall::kWrite) {
    Append(out, " %14" PRIu64 " %14" PRIu64 " %10" PRIu64 " %10" PRIu64, c.requested_bytes, c.bytes,
           c.min_request, c.max_request);
  } else if (call == TraceCall::kSeek && trace.seek_deltas != 0) {
    Append(out, "   average seek delta=%.0f",
           static_cast<double>(trace.seek_delta_sum) / static_cast<double>(trace.seek_deltas));
  }
  // Said only where a call raced a close of its descriptor in another thread.
  if (c.raced != 0) Append(out, "   raced=%" PRIu64, c.raced);
  out += '\n';
}

void AppendPattern(std::string& out, const FileTrace& trace, Direction direction) {
  const std::string_view pattern = PatternOf(trace, direction);
  if (pattern.empty()) return;
  const auto& access = trace.access[static_cast<size_t>(direction)];
  Append(out, "%-5s pattern: %s (", std::string(ToString(direction)).c_str(),
         std::string(pattern).c_str());
  const char* separator = "";
  for (size_t a = 0; a < kAccessCount; ++a) {
    if (access[a].requests == 0) continue;
    Append(out, "%s%" PRIu64 " %s", separator, access[a].requests,
           std::string(ToString(static_cast<Access>(a))).c_str());
    separator = ", ";
  }
  out += ")\n";
}

void AppendSizes(std::string& out, const FileTrace& trace, Direction direction) {
  const auto& sizes = trace.sizes[static_cast<size_t>(direction)];
  bool any = false;
  for (size_t b = 0; b < kSizeBuckets; ++b) {
    if (sizes[b] == 0) continue;
    if (!any) Append(out, "%-5s request sizes:\n", std::string(ToString(direction)).c_str());
    any = true;
    const std::string high = b + 1 < kSizeBuckets ? BinarySize(SizeBucketLow(b + 1)) : "";
    Append(out, "   [%6s, %6s) %12" PRIu64 "\n", BinarySize(SizeBucketLow(b)).c_str(), high.c_str(),
           sizes[b]);
  }
}

void AppendFile(std::string& out, const TracedFile& file) {
  const FileTrace& t = file.trace;
  const uint64_t bytes = t.Call(TraceCall::kRead).bytes + t.Call(TraceCall::kWrite).bytes;
  const uint64_t ns = t.Call(TraceCall::kRead).ns + t.Call(TraceCall::kWrite).ns;
  out += "=========================================================================\n";
  Append(out, "Trace close : program <-> os : %s : (%" PRIu64 "/%.6f)=%.2f kB/s\n",
         file.path.c_str(), bytes, Seconds(ns),
         ns == 0 ? 0.0 : static_cast<double>(bytes) / Seconds(ns) / 1000.0);
  Append(out, "       current size=%" PRIu64 "  max_size=%" PRIu64 "%s\n", t.size, t.max_extent,
         t.block_device ? "  (block device)" : "");
  Append(out, "       oflags=0x%x=%s  opens=%u\n", t.open_flags,
         OpenFlagsText(t.open_flags).c_str(), t.opens);
  Append(out, "%-8s %10s %12s %8s %14s %14s %10s %10s\n", "call", "count", "seconds", "errors",
         "requested", "bytes", "min_req", "max_req");
  for (size_t c = 0; c < kTraceCallCount; ++c) AppendCallLine(out, t, static_cast<TraceCall>(c));
  for (Direction d : {Direction::kRead, Direction::kWrite}) AppendPattern(out, t, d);
  for (Direction d : {Direction::kRead, Direction::kWrite}) AppendSizes(out, t, d);
}

}  // namespace

std::string OpenFlagsText(uint32_t flags) {
  std::string text;
  switch (flags & O_ACCMODE) {
    case O_WRONLY:
      text = "WRONLY";
      break;
    case O_RDWR:
      text = "RDWR";
      break;
    default:
      text = "RDONLY";
      break;
  }
  static constexpr std::array<std::pair<uint32_t, const char*>, 10> kFlags{{
      {O_CREAT, "CREAT"},
      {O_EXCL, "EXCL"},
      {O_TRUNC, "TRUNC"},
      {O_APPEND, "APPEND"},
      {O_DIRECT, "DIRECT"},
      {O_DSYNC, "DSYNC"},
      {O_SYNC & ~O_DSYNC, "SYNC"},
      {O_NOATIME, "NOATIME"},
      {O_CLOEXEC, "CLOEXEC"},
      {O_NONBLOCK, "NONBLOCK"},
  }};
  for (const auto& [bit, name] : kFlags) {
    if ((flags & bit) == bit) {
      text += '|';
      text += name;
    }
  }
  return text;
}

std::string FormatTraceText(const ProcessTrace& process) {
  std::string out;
  out += "#########################################################################\n";
  Append(out, "iowatch trace: pid %" PRId64 " (parent %" PRId64 ") %s: %.6f s, %zu file%s\n",
         process.pid, process.parent_pid, process.program.c_str(), process.seconds,
         process.files.size(), process.files.size() == 1 ? "" : "s");
  if (process.clock == "none") out += "call times not measured (IOWATCH_TRACE_TIMES=0)\n";
  for (const TracedFile& file : process.files) AppendFile(out, file);
  out += "=========================================================================\n";
  return out;
}

}  // namespace iowatch::trace
