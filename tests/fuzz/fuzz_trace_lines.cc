// The trace's JSON lines as `iowatch trace` reads them back from a file the
// traced program can write to, so hostile: reports and start lines. Every
// report read is written again as a line that reads back.
#include "tests/fuzz/fuzz_input.h"
#include "trace/trace_json_read.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace iowatch::trace;
  const TraceLines lines = ParseTraceJsonLines(iowatch::fuzz::AsText(data, size), "fuzz.json");
  (void)Unreported(lines);
  for (const ProcessTrace& process : lines.processes) {
    const TraceLines again = ParseTraceJsonLines(TraceJsonLine(process), "again.json");
    iowatch::fuzz::Require(again.bad_lines.empty() && again.processes.size() == 1);
  }
  return 0;
}
