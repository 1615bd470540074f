// /proc/stat, /proc/meminfo and /proc/vmstat (the three files are the same
// input: each parser skips what is not its own), then the vmstat derivation
// between two fuzzed samples: every rate finite and >= 0.
#include <cmath>

#include "collectors/vm/meminfo.h"
#include "collectors/vm/proc_stat.h"
#include "collectors/vm/proc_vmstat.h"
#include "collectors/vm/vmstat.h"
#include "daemon/sampling/derived_series.h"
#include "tests/fuzz/fuzz_input.h"

using iowatch::fuzz::Require;
namespace collectors = iowatch::collectors;

namespace {

bool Sample(std::string_view text, collectors::VmSample& out) {
  auto stat = collectors::ParseProcStat(text, "stat");
  if (!stat) return false;
  out.stat = *stat;
  out.meminfo = collectors::ParseMeminfo(text, "meminfo").values;
  out.vmstat = collectors::ParseProcVmstat(text, "vmstat");
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [first, second] = iowatch::fuzz::TwoSamples(iowatch::fuzz::AsText(data, size));
  collectors::VmSample prev, cur;
  if (!Sample(first, prev) || !Sample(second, cur)) return 0;
  const double elapsed = static_cast<double>(size % 7);  // 0 included
  const auto rates = collectors::ComputeVmstatRates(prev, cur, elapsed, 4096);
  for (const auto& series : iowatch::daemon::VmstatSeriesTable()) {
    const double value = series.value(rates);
    Require(std::isfinite(value) && value >= 0);
  }
  return 0;
}
