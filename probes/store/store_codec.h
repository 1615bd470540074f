// How the store writes the parts of a run that are not plain columns.
//
// Histogram BLOBs (run_ops.clat_histogram, run_ops.lat_histogram): format 1
// of probes/stats/histogram_codec.h; an empty histogram is stored as NULL.
//
// Job options text (runs.job_options): ToJobOptions joined as
// "name=value;name=value", '\' and ';' inside values escaped with '\', an
// empty value (a bare flag such as time_based) written as "time_based=".
// Every option is kept, the name too, so the JobSpec can be rebuilt.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "probes/spec/job_spec.h"
#include "probes/stats/histogram_codec.h"

namespace iowatch::probes {

std::string JobOptionsText(const JobSpec& spec);
// Splits the text back into options and runs ParseJobOptions on them.
Result<JobSpec> ParseJobOptionsText(std::string_view text);

}  // namespace iowatch::probes
