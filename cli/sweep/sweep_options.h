// The command line of `iowatch sweep`: the target as `iowatch probe` takes it
// (--filename or --directory with --size; --ioengine), the grid as lists
// (--bs=4k,64k,1m --iodepth=1,8,32 --rw=read,write --pattern=random,sequential
// --mode=direct,buffered,raw), --budget for the whole sweep, the output
// (--output-format=table|json|svg, --svg=FILE to also write the chart;
// --latency=lat|clat, the latency the table, chart and findings show), the
// safety flags (--allow-block-device, --destructive), where the store is
// (--state.dir, --no-store), and the two other forms: --list, --compare A B.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "cli/shared/push_options.h"
#include "probes/spec/job_spec.h"
#include "probes/sweep/sweep_plan.h"
#include "probes/target/probe_target.h"

namespace iowatch::daemon {

enum class SweepOutput { kTable, kJson, kSvg };

struct SweepOptions {
  probes::JobSpec base;  // target, size, engine
  probes::SweepGrid grid;
  probes::TargetPolicy policy;
  SweepOutput output = SweepOutput::kTable;
  probes::SweepLatency latency = probes::SweepLatency::kLat;
  std::string svg_file;
  std::string state_dir;  // empty: the daemon's default
  bool store = true;
  bool list = false;
  std::optional<std::pair<int64_t, int64_t>> compare;
  PushOptions push;  // --push-gateway and friends
  bool help = false;
};

Result<SweepOptions> ParseSweepArgs(const std::vector<std::string>& args,
                                    const probes::TargetPolicy& policy = {});
std::string SweepUsage();

}  // namespace iowatch::daemon
