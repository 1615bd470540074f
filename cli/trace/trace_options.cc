#include "cli/trace/trace_options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/units.h"
#include "probes/engines/engine.h"

namespace iowatch::daemon {
namespace {

Error Usage(std::string message) {
  Error error;
  error.code = ErrorCode::kInvalidArgument;
  error.message = std::move(message);
  return error;
}

// "--name=value" or "--name value": the value, advancing i past it.
Result<std::string> ValueOf(const std::vector<std::string>& args, size_t& i,
                            std::string_view name) {
  const std::string& a = args[i];
  if (a.size() > name.size() && a[name.size()] == '=') return a.substr(name.size() + 1);
  if (i + 1 >= args.size())
    return std::unexpected(Usage(fmt::format("{}: expected a value", name)));
  return args[++i];
}

// The what-if's larger requests are asynchronous, several in flight: its
// engines are the asynchronous ones, named as --ioengine names them.
std::vector<std::string_view> WhatIfEngineNames() {
  std::vector<std::string_view> names;
  for (const probes::EngineKind kind : probes::AsynchronousEngines()) {
    names.push_back(probes::ToString(kind));
  }
  return names;
}

bool Is(const std::string& a, std::string_view name) {
  return a == name || (a.starts_with(name) && a.size() > name.size() && a[name.size()] == '=');
}

Status ApplyValue(TraceOptions& o, std::string_view name, const std::string& value) {
  if (name == "--output-format" || name == "-o") {
    if (value != "normal" && value != "json") {
      return std::unexpected(
          Usage(fmt::format("{}: expected normal or json, found {:?}", name, value)));
    }
    o.json = value == "json";
  } else if (name == "--output") {
    o.output_file = value;
  } else if (name == "--scratch-dir") {
    o.scratch_dir = value;
  } else if (name == "--library") {
    o.library = value;
  } else if (name == "--what-if-max-size") {
    auto size = ParseSize(value);
    if (!size || *size == 0) {
      return std::unexpected(Usage(
          fmt::format("--what-if-max-size: expected a size such as \"4g\", found {:?}", value)));
    }
    o.what_if_max_size = *size;
  } else if (name == "--what-if-engine") {
    const std::vector<std::string_view> names = WhatIfEngineNames();
    if (std::ranges::find(names, value) == names.end()) {
      return std::unexpected(Usage(fmt::format("--what-if-engine: expected {}, found {:?}",
                                               fmt::join(names, " or "), value)));
    }
    o.what_if_engine = *ValueIn<probes::EngineKind>(probes::Engines(), value);
  }
  return {};
}

}  // namespace

Result<TraceOptions> ParseTraceArgs(const std::vector<std::string>& args) {
  static constexpr std::string_view kValued[] = {
      "--output-format", "-o", "--output", "--scratch-dir", "--library", "--what-if-max-size",
      "--what-if-engine"};
  TraceOptions o;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (!a.starts_with("-")) break;  // the command
    if (a == "--help" || a == "-h") {
      o.help = true;
      return o;
    }
    if (a == "--what-if") {
      o.what_if = true;
      continue;
    }
    if (a == "--no-times") {
      o.time_calls = false;
      continue;
    }
    bool known = false;
    for (std::string_view name : kValued) {
      if (!Is(a, name)) continue;
      known = true;
      auto value = ValueOf(args, i, name);
      if (!value) return ErrorOf(value);
      if (auto ok = ApplyValue(o, name, *value); !ok) return ErrorOf(ok);
      break;
    }
    if (!known) {
      return std::unexpected(Usage(fmt::format(
          "{:?}: not an option of iowatch trace (iowatch trace --help); the command follows --",
          a)));
    }
  }
  o.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (o.command.empty()) {
    return std::unexpected(
        Usage("expected a command to trace: iowatch trace [OPTION]... -- COMMAND [ARG]..."));
  }
  return o;
}

std::string TraceUsage() {
  return std::string(R"(Usage: iowatch trace [OPTION]... [--] COMMAND [ARG]...

Runs COMMAND with libiowatch-trace.so preloaded (LD_PRELOAD, inherited by its children) and,
when it has exited, reports per process and file what it did to its files: calls, bytes
requested and moved, the smallest and largest request, the time spent in the calls, the
access pattern (sequential, backward, random) and the request-size histogram. Traced:
open/openat/creat, read/write, pread/pwrite, readv/writev, lseek, fsync/fdatasync, close
and dup, as the program calls them; not stdio's internal calls, mmap'd access, preadv/
pwritev, io_uring or libaio. A process that ends by a signal, _exit() or exec, or cannot
write its report, reports nothing, and is named. The exit status is COMMAND's (128 + the
signal if one ended it).

Options:
  --output=FILE            write the report to FILE (default: standard error)
  --output-format=normal|json, -o
                           MIO-style text (default) or one JSON document
  --what-if                replay each traced file's accesses with the probe engine, as
                           traced and with 2 MiB direct asynchronous requests, 4 in flight,
                           on a scratch file beside it (never the file itself): the ratio
                           says what larger asynchronous I/O would buy
  --scratch-dir=DIR        where the what-if's probe files go (default: a new directory
                           beside each traced file, on its filesystem; removed after)
  --what-if-max-size=SIZE  do not replay files larger than SIZE (default 4g)
  --no-times               count calls and bytes without timing them: two TSC reads
                           less per call, half the library's cost (IOWATCH_TRACE_TIMES=0)
)") +
         fmt::format(
             "  --what-if-engine={}\n"
             "                           the larger requests' engine (default {})\n",
             fmt::join(WhatIfEngineNames(), "|"), probes::ToString(TraceOptions{}.what_if_engine)) +
         R"(  --library=PATH           the trace library (default: beside iowatch, or
                           ../lib/iowatch/ from it)
  --help                   this text

The library alone: LD_PRELOAD=/usr/lib/iowatch/libiowatch-trace.so COMMAND with
IOWATCH_TRACE_OUTPUT=FILE appends one JSON line per process at its exit,
IOWATCH_TRACE_REPORT=FILE the text (/dev/tty: on the terminal); with neither it writes
nothing (never on the program's standard error, which may be its data).
IOWATCH_TRACE_TIMES=0 is --no-times.
)";
}

}  // namespace iowatch::daemon
