#include "collectors/trace/trace_json_read.h"

#include <nlohmann/json.hpp>

#include "collectors/text_scan.h"

namespace iowatch::collectors::trace {
namespace {

using nlohmann::json;

CallTotals ReadCall(const json& j) {
  CallTotals c;
  c.calls = j.at("calls").get<uint64_t>();
  c.errors = j.at("errors").get<uint64_t>();
  c.ns = j.at("ns").get<uint64_t>();
  c.requested_bytes = j.value("requested_bytes", uint64_t{0});
  c.bytes = j.value("bytes", uint64_t{0});
  c.min_request = j.value("min_request", uint64_t{0});
  c.max_request = j.value("max_request", uint64_t{0});
  return c;
}

void ReadDirection(const json& j, Direction direction, FileTrace& t) {
  const auto d = static_cast<size_t>(direction);
  for (size_t a = 0; a < kAccessCount; ++a) {
    const json& access = j.at(std::string(ToString(static_cast<Access>(a))));
    AccessTotals& totals = t.access[d][a];
    totals.requests = access.at("requests").get<uint64_t>();
    totals.bytes = access.at("bytes").get<uint64_t>();
    totals.first_seen = access.at("first_seen").get<uint32_t>();
    t.classes_seen = std::max(t.classes_seen, totals.first_seen);
  }
  for (const json& bucket : j.at("request_sizes")) {
    t.sizes[d][SizeBucket(bucket.at(0).get<uint64_t>())] += bucket.at(1).get<uint64_t>();
  }
}

TracedFile ReadFile(const json& j) {
  TracedFile file;
  file.path = j.at("path").get<std::string>();
  FileTrace& t = file.trace;
  t.opens = j.at("opens").get<uint32_t>();
  t.open_flags = j.at("open_flags").get<uint32_t>();
  t.block_device = j.at("block_device").get<bool>();
  t.size = j.at("size").get<uint64_t>();
  t.max_extent = j.at("max_extent").get<uint64_t>();
  const json& calls = j.at("calls");
  for (size_t c = 0; c < kTraceCallCount; ++c) {
    t.calls[c] = ReadCall(calls.at(std::string(ToString(static_cast<TraceCall>(c)))));
  }
  t.seek_deltas = j.at("seek_deltas").get<uint64_t>();
  t.seek_delta_sum = j.at("seek_delta_sum").get<int64_t>();
  ReadDirection(j.at("read"), Direction::kRead, t);
  ReadDirection(j.at("write"), Direction::kWrite, t);
  return file;
}

ProcessTrace ReadProcess(const json& j) {
  if (!j.is_object() || j.value("iowatch_trace", 0) != kTraceFormatVersion) {
    throw std::invalid_argument("expected an object with \"iowatch_trace\": 1");
  }
  ProcessTrace p;
  p.pid = j.at("pid").get<int64_t>();
  p.parent_pid = j.at("parent_pid").get<int64_t>();
  p.program = j.at("program").get<std::string>();
  p.seconds = j.at("seconds").get<double>();
  p.clock = j.at("clock").get<std::string>();
  for (const json& file : j.at("files")) p.files.push_back(ReadFile(file));
  return p;
}

}  // namespace

TraceLines ParseTraceJsonLines(std::string_view text, const std::string& path) {
  TraceLines result;
  ForEachLine(text, [&](std::string_view line, int number) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    try {
      result.processes.push_back(ReadProcess(json::parse(line)));
    } catch (const std::exception& e) {  // nlohmann's parse, type and key errors, ours
      Error error;
      error.code = ErrorCode::kParse;
      error.message = fmt::format("not a trace line: {}", e.what());
      error.path = path;
      error.line = number;
      result.bad_lines.push_back(std::move(error));
    }
  });
  return result;
}

}  // namespace iowatch::collectors::trace
