// TraceJsonLine (process_trace.h): the JSON line the library appends at exit.
// Hand-written with snprintf, as the text report: no JSON library inside the
// traced program. Strings are valid UTF-8 whatever the names' bytes.
#include <cinttypes>
#include <cstdio>

#include "common/utf8.h"
#include "trace/process_trace.h"

namespace iowatch::trace {
namespace {

void AppendNumber(std::string& out, uint64_t value) {
  char buffer[24];
  const int n = std::snprintf(buffer, sizeof buffer, "%" PRIu64, value);
  out.append(buffer, static_cast<size_t>(n));
}

void AppendSigned(std::string& out, int64_t value) {
  char buffer[24];
  const int n = std::snprintf(buffer, sizeof buffer, "%" PRId64, value);
  out.append(buffer, static_cast<size_t>(n));
}

void AppendDouble(std::string& out, double value) {
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof buffer, "%.9g", value);
  out.append(buffer, static_cast<size_t>(n));
}

// A JSON string: common/utf8.h's, so that a name that is not UTF-8 (a byte
// of it each shown as U+FFFD) still makes a line every reader takes.
void AppendString(std::string& out, std::string_view text) { AppendJsonString(out, text); }

// One JSON object being written: '{' when made, '}' when destroyed, a
// comma before every member but the first.
class Object {
 public:
  explicit Object(std::string& out) : out_(out) { out_ += '{'; }
  ~Object() { out_ += '}'; }
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  void Number(std::string_view key, uint64_t value) { AppendNumber(Key(key), value); }
  void Signed(std::string_view key, int64_t value) { AppendSigned(Key(key), value); }
  void Double(std::string_view key, double value) { AppendDouble(Key(key), value); }
  void String(std::string_view key, std::string_view text) { AppendString(Key(key), text); }
  void Bool(std::string_view key, bool value) { Key(key) += value ? "true" : "false"; }
  // The text a member's value is written to (an Object of its own, an array).
  std::string& Key(std::string_view key) {
    if (!first_) out_ += ',';
    first_ = false;
    AppendString(out_, key);
    out_ += ':';
    return out_;
  }

 private:
  std::string& out_;
  bool first_ = true;
};

void AppendJsonCall(std::string& out, const CallTotals& c, bool transfer) {
  Object o(out);
  o.Number("calls", c.calls);
  o.Number("errors", c.errors);
  o.Number("ns", c.ns);
  o.Number("raced", c.raced);
  if (!transfer) return;
  o.Number("requested_bytes", c.requested_bytes);
  o.Number("bytes", c.bytes);
  o.Number("min_request", c.min_request);
  o.Number("max_request", c.max_request);
}

void AppendSizes(std::string& out, const FileTrace& t, size_t d) {
  out += '[';  // [bucket's lowest size, requests] for each non-empty bucket
  const char* separator = "";
  for (size_t b = 0; b < kSizeBuckets; ++b) {
    if (t.sizes[d][b] == 0) continue;
    out += separator;
    out += '[';
    AppendNumber(out, SizeBucketLow(b));
    out += ',';
    AppendNumber(out, t.sizes[d][b]);
    out += ']';
    separator = ",";
  }
  out += ']';
}

void AppendJsonDirection(std::string& out, const FileTrace& t, Direction direction) {
  const auto d = static_cast<size_t>(direction);
  Object o(out);
  o.String("pattern", PatternOf(t, direction));
  for (size_t a = 0; a < kAccessCount; ++a) {
    Object access(o.Key(ToString(static_cast<Access>(a))));
    access.Number("requests", t.access[d][a].requests);
    access.Number("bytes", t.access[d][a].bytes);
    access.Number("first_seen", t.access[d][a].first_seen);
  }
  AppendSizes(o.Key("request_sizes"), t, d);
}

void AppendJsonFile(std::string& out, const TracedFile& file) {
  const FileTrace& t = file.trace;
  Object o(out);
  o.String("path", file.path);
  o.Number("opens", t.opens);
  o.Number("open_flags", t.open_flags);
  o.String("open_flags_text", OpenFlagsText(t.open_flags));
  o.Bool("block_device", t.block_device);
  o.Number("size", t.size);
  o.Number("max_extent", t.max_extent);
  {
    Object calls(o.Key("calls"));
    for (size_t c = 0; c < kTraceCallCount; ++c) {
      const auto call = static_cast<TraceCall>(c);
      AppendJsonCall(calls.Key(ToString(call)), t.calls[c],
                     call == TraceCall::kRead || call == TraceCall::kWrite);
    }
  }
  o.Number("seek_deltas", t.seek_deltas);
  o.Signed("seek_delta_sum", t.seek_delta_sum);
  AppendJsonDirection(o.Key("read"), t, Direction::kRead);
  AppendJsonDirection(o.Key("write"), t, Direction::kWrite);
}

}  // namespace

std::string TraceJsonLine(const ProcessTrace& process) {
  std::string out;
  {
    Object o(out);
    o.Number("iowatch_trace", kTraceFormatVersion);
    o.Signed("pid", process.pid);
    o.Signed("parent_pid", process.parent_pid);
    o.String("program", process.program);
    o.Double("seconds", process.seconds);
    o.String("clock", process.clock);
    std::string& files = o.Key("files");
    files += '[';
    for (size_t i = 0; i < process.files.size(); ++i) {
      if (i != 0) files += ',';
      AppendJsonFile(files, process.files[i]);
    }
    files += ']';
  }
  out += '\n';
  return out;
}

}  // namespace iowatch::trace
