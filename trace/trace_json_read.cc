#include "trace/trace_json_read.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "collectors/text/text_scan.h"
#include "common/file_tree.h"
#include "common/json_integer.h"

namespace iowatch::trace {
namespace {

using nlohmann::json;

// A transfer's figure; 0 where the call kind has none (open, seek, ...).
uint64_t OptionalCount(const json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() ? 0 : IntegerOf<uint64_t>(*it);
}

CallTotals ReadCall(const json& j) {
  CallTotals c;
  c.calls = IntegerOf<uint64_t>(j.at("calls"));
  c.errors = IntegerOf<uint64_t>(j.at("errors"));
  c.ns = IntegerOf<uint64_t>(j.at("ns"));
  c.raced = IntegerOf<uint64_t>(j.at("raced"));
  c.requested_bytes = OptionalCount(j, "requested_bytes");
  c.bytes = OptionalCount(j, "bytes");
  c.min_request = OptionalCount(j, "min_request");
  c.max_request = OptionalCount(j, "max_request");
  return c;
}

void ReadDirection(const json& j, Direction direction, FileTrace& t) {
  const auto d = static_cast<size_t>(direction);
  for (size_t a = 0; a < kAccessCount; ++a) {
    const json& access = j.at(std::string(ToString(static_cast<Access>(a))));
    AccessTotals& totals = t.access[d][a];
    totals.requests = IntegerOf<uint64_t>(access.at("requests"));
    totals.bytes = IntegerOf<uint64_t>(access.at("bytes"));
    totals.first_seen = IntegerOf<uint32_t>(access.at("first_seen"));
    t.classes_seen = std::max(t.classes_seen, totals.first_seen);
  }
  for (const json& bucket : j.at("request_sizes")) {
    t.sizes[d][SizeBucket(IntegerOf<uint64_t>(bucket.at(0)))] += IntegerOf<uint64_t>(bucket.at(1));
  }
}

TracedFile ReadFile(const json& j) {
  TracedFile file;
  file.path = j.at("path").get<std::string>();
  FileTrace& t = file.trace;
  t.opens = IntegerOf<uint32_t>(j.at("opens"));
  t.open_flags = IntegerOf<uint32_t>(j.at("open_flags"));
  t.block_device = j.at("block_device").get<bool>();
  t.size = IntegerOf<uint64_t>(j.at("size"));
  t.max_extent = IntegerOf<uint64_t>(j.at("max_extent"));
  const json& calls = j.at("calls");
  for (size_t c = 0; c < kTraceCallCount; ++c) {
    t.calls[c] = ReadCall(calls.at(std::string(ToString(static_cast<TraceCall>(c)))));
  }
  t.seek_deltas = IntegerOf<uint64_t>(j.at("seek_deltas"));
  t.seek_delta_sum = IntegerOf<int64_t>(j.at("seek_delta_sum"));
  ReadDirection(j.at("read"), Direction::kRead, t);
  ReadDirection(j.at("write"), Direction::kWrite, t);
  return file;
}

ProcessTrace ReadProcess(const json& j) {
  if (!j.is_object() || !j.contains("iowatch_trace") || !j["iowatch_trace"].is_number_integer() ||
      IntegerOf<int64_t>(j["iowatch_trace"]) != kTraceFormatVersion) {
    throw std::invalid_argument("expected an object with \"iowatch_trace\": 1");
  }
  ProcessTrace p;
  p.pid = IntegerOf<int64_t>(j.at("pid"));
  p.parent_pid = IntegerOf<int64_t>(j.at("parent_pid"));
  p.program = j.at("program").get<std::string>();
  p.seconds = j.at("seconds").get<double>();
  p.clock = j.at("clock").get<std::string>();
  for (const json& file : j.at("files")) p.files.push_back(ReadFile(file));
  return p;
}

bool IsStartLine(const json& j) { return j.is_object() && j.contains("iowatch_trace_start"); }

StartedProcess ReadStart(const json& j) {
  if (!j["iowatch_trace_start"].is_number_integer() ||
      IntegerOf<int64_t>(j["iowatch_trace_start"]) != 1) {
    throw std::invalid_argument("expected \"iowatch_trace_start\": 1");
  }
  return {IntegerOf<int64_t>(j.at("pid")), IntegerOf<int64_t>(j.at("parent_pid")),
          j.at("program").get<std::string>()};
}

Error BadLine(const std::string& path, int number, std::string message) {
  Error error;
  error.code = ErrorCode::kParse;
  error.message = std::move(message);
  error.path = path;
  error.line = number;
  return error;
}

void ParseLine(std::string_view line, int number, const std::string& path, TraceLines& result) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  try {
    const json j = json::parse(line);
    if (IsStartLine(j)) {
      result.started.push_back(ReadStart(j));
    } else {
      result.processes.push_back(ReadProcess(j));
    }
  } catch (const std::exception& e) {  // nlohmann's parse, type and key errors, ours
    result.bad_lines.push_back(
        BadLine(path, number, fmt::format("not a trace line: {}", e.what())));
  }
}

}  // namespace

TraceLines ParseTraceJsonLines(std::string_view text, const std::string& path) {
  TraceLines result;
  collectors::ForEachLine(
      text, [&](std::string_view line, int number) { ParseLine(line, number, path, result); });
  return result;
}

Result<TraceLines> ReadTraceJsonFile(const std::string& path) {
  TraceLines result;
  const auto too_long = [&](int number) {
    result.bad_lines.push_back(BadLine(
        path, number,
        fmt::format("not a trace line: longer than {} bytes, not read", kMaxTraceLineBytes)));
  };
  Status read = ForEachLineOfFile(
      path, [&](std::string_view line, int number) { ParseLine(line, number, path, result); },
      too_long,
      {.open_error = "cannot read the trace",
       .read_error = "cannot read the trace",
       .max_bytes = kMaxTraceLineBytes});
  if (!read) return ErrorOf(read);
  return result;
}

std::vector<StartedProcess> Unreported(const TraceLines& lines) {
  std::map<int64_t, const StartedProcess*> last_start;  // by pid: an exec starts it again
  for (const StartedProcess& start : lines.started) last_start[start.pid] = &start;
  std::set<int64_t> reported;
  for (const ProcessTrace& process : lines.processes) reported.insert(process.pid);
  std::vector<StartedProcess> missing;
  for (const auto& [pid, start] : last_start) {
    if (!reported.contains(pid)) missing.push_back(*start);
  }
  return missing;
}

}  // namespace iowatch::trace
