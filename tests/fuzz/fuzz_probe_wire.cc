// What iowatch reads back that another process or a file wrote: a clone's
// result up its pipe (a clone that died mid-write, or garbage) and a stored
// sweep's JSON (a damaged store). Either decodes or is an error, never a
// crash; what decodes encodes to the same figures.
#include "probes/run/result_wire.h"
#include "probes/sweep/sweep_report.h"
#include "tests/fuzz/fuzz_input.h"

using iowatch::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const iowatch::probes::JobSpec spec;
  const auto decoded = iowatch::probes::DecodeResult({data, size}, spec);
  if (decoded && *decoded) {
    const auto again = iowatch::probes::DecodeResult(iowatch::probes::EncodeResult(*decoded), spec);
    Require(again.has_value() && again->has_value());
    Require((*again)->read.ios == (**decoded).read.ios &&
            (*again)->write.bytes == (**decoded).write.bytes &&
            (*again)->read.clat_histogram.Count() == (**decoded).read.clat_histogram.Count());
  }
  const auto sweep = iowatch::probes::ParseSweepJson(iowatch::fuzz::AsText(data, size));
  if (sweep) {
    const auto again = iowatch::probes::ParseSweepJson(iowatch::probes::SweepJson(*sweep));
    Require(again.has_value() && again->samples.size() == sweep->samples.size());
  }
  return 0;
}
