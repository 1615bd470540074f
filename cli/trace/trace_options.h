// The command line of `iowatch trace [OPTION]... [--] COMMAND [ARG]...`:
// where the report goes (--output=FILE, else standard error, as strace and
// time do, so that the command's own output stays its own), its format
// (--output-format=normal|json), --what-if with its scratch directory and
// size limit, --no-times, and --library to name libiowatch-trace.so.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "probes/spec/job_spec.h"

namespace iowatch::daemon {

struct TraceOptions {
  std::vector<std::string> command;
  bool json = false;
  std::string output_file;  // empty: standard error
  bool time_calls = true;   // --no-times: IOWATCH_TRACE_TIMES=0
  bool what_if = false;
  std::string scratch_dir;  // empty: beside each traced file
  uint64_t what_if_max_size = uint64_t{4} << 30;
  probes::EngineKind what_if_engine = probes::EngineKind::kIoUring;
  std::string library;  // empty: found beside the iowatch binary
  bool help = false;
};

Result<TraceOptions> ParseTraceArgs(const std::vector<std::string>& args);
std::string TraceUsage();

}  // namespace iowatch::daemon
