// Parser for pressure stall information (Documentation/accounting/psi.rst):
// /proc/pressure/{io,memory,cpu} and a cgroup v2 group's io.pressure, e.g.
//   some avg10=0.03 avg60=0.31 avg300=1.81 total=2733142479
//   full avg10=0.03 avg60=0.30 avg300=1.71 total=1512831597
// "some": the share of time at least one task was stalled on the resource;
// "full": all non-idle tasks at once (absent from /proc/pressure/cpu before
// Linux 5.13). total is cumulative microseconds, the averages are percent.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::collectors {

struct PressureLine {
  double avg10 = 0;  // percent of the last 10 s
  double avg60 = 0;
  double avg300 = 0;
  uint64_t total_us = 0;  // stalled time since boot, microseconds
  bool operator==(const PressureLine&) const = default;
};

// A percentage (the kernel prints two decimals) as a ratio 0..1, rounded to
// those decimals: 40.26 gives 0.4026, not 0.40259999999999996.
double PressureRatio(double percent);

struct Pressure {
  PressureLine some;
  std::optional<PressureLine> full;
  bool operator==(const Pressure&) const = default;
};

// Fails (with path:line) unless there is a well-formed "some" line; a
// malformed "full" line fails too; unknown lines (a future kernel) are ignored.
Result<Pressure> ParsePressure(std::string_view text, std::string_view path);

// The resources of /proc/pressure, in file-name order.
inline constexpr std::string_view kPressureResources[] = {"cpu", "io", "memory"};

// <procfs>/pressure/<resource> read and parsed. A kernel built without
// CONFIG_PSI has no such file (kNotFound); one booted with psi=0 refuses the
// read (EOPNOTSUPP): both come back as the read's error, path and errno.
Result<Pressure> ReadPressure(const FileTree& procfs, std::string_view resource);

}  // namespace iowatch::collectors
