#include "probes/what_if/what_if.h"

#include <fmt/format.h>

#include <algorithm>

#include "probes/pipeline/run_probe.h"
#include "probes/target/page_cache.h"

namespace iowatch::probes {
namespace {

constexpr uint64_t kSector = 512;

uint64_t RoundUp(uint64_t value, uint64_t unit) { return (value + unit - 1) / unit * unit; }

RwMode ModeOf(const TracedAccess& a) {
  if (a.pattern == TracedPattern::kRandom) return a.write ? RwMode::kRandWrite : RwMode::kRandRead;
  return a.write ? RwMode::kWrite : RwMode::kRead;
}

JobSpec BaseSpec(const WhatIfFile& file, const WhatIfSettings& settings, const TracedAccess& a,
                 uint64_t block_size) {
  JobSpec spec;
  spec.name = "what-if";
  spec.directory = settings.scratch_directory;
  spec.size = WhatIfProbeSize(file, settings);
  spec.rw = ModeOf(a);
  spec.block_size = block_size;
  // Backward: each request ends where the one before began (rw=read:-2bs).
  if (a.pattern == TracedPattern::kBackward) {
    spec.rw_sequence_add = -2 * static_cast<int64_t>(block_size);
  }
  spec.io_size = std::max(a.bytes / block_size, uint64_t{1}) * block_size;
  return spec;
}

// One fsync at the end of a write step when the application fsynced: after
// as many writes as the step has (set once io_size is final).
void SyncAtEnd(const WhatIfFile& file, const TracedAccess& a, JobSpec& spec) {
  if (!a.write || !file.fsynced) return;
  spec.fsync =
      static_cast<uint32_t>(std::min<uint64_t>(spec.io_size / spec.block_size, UINT32_MAX));
}

JobSpec AsTraced(const WhatIfFile& file, const WhatIfSettings& settings, const TracedAccess& a) {
  uint64_t request = std::max(a.bytes / std::max(a.requests, uint64_t{1}), uint64_t{1});
  if (file.direct) request = RoundUp(request, kSector);
  request = std::min(request, settings.larger_request);  // bs's limit is 64m; the file's region
  JobSpec spec = BaseSpec(file, settings, a, request);
  spec.engine = EngineKind::kPsync;
  spec.direct = file.direct;
  SyncAtEnd(file, a, spec);
  return spec;
}

JobSpec Larger(const WhatIfFile& file, const WhatIfSettings& settings, const TracedAccess& a) {
  JobSpec spec = BaseSpec(file, settings, a, settings.larger_request);
  spec.io_size = RoundUp(a.bytes, settings.larger_request);
  spec.engine = settings.larger_engine;
  spec.direct = true;
  spec.iodepth = settings.larger_depth;
  SyncAtEnd(file, a, spec);
  return spec;
}

double Seconds(const ProbeResult& r) { return std::chrono::duration<double>(r.elapsed).count(); }

Result<double> TimeRun(const JobSpec& spec, const std::atomic<bool>* cancel) {
  if (!spec.direct) DropCachedPages(spec.TargetPath());
  ProbeRunOptions options;
  options.run.cancel = cancel;
  auto outcome = RunProbe(spec, options);
  if (!outcome) return ErrorOf(outcome);
  const ProbeResult& r = outcome->result;
  if (r.end != RunEnd::kCompleted) {
    return MakeError(ErrorCode::kIo,
                     fmt::format("the replay {} ended {}{}", JobFingerprint(spec), ToString(r.end),
                                 r.error ? ": " + r.error->ToString() : std::string()));
  }
  return Seconds(r);
}

}  // namespace

uint64_t WhatIfProbeSize(const WhatIfFile& file, const WhatIfSettings& settings) {
  return RoundUp(std::max(file.size, uint64_t{1}), settings.larger_request);
}

Result<std::vector<WhatIfStep>> PlanWhatIf(const WhatIfFile& file, const WhatIfSettings& settings) {
  std::vector<WhatIfStep> steps;
  for (const TracedAccess& a : file.accesses) {
    if (a.requests == 0 || a.bytes == 0) continue;
    WhatIfStep step;
    step.access = a;
    step.as_traced = AsTraced(file, settings, a);
    step.larger = a.pattern == TracedPattern::kRandom ? step.as_traced : Larger(file, settings, a);
    for (const JobSpec* spec : {&step.as_traced, &step.larger}) {
      if (auto ok = ValidateJobSpec(*spec); !ok) return ErrorOf(ok);
    }
    steps.push_back(std::move(step));
  }
  if (steps.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "no reads or writes that moved data: nothing to replay", file.path);
  }
  return steps;
}

Status RunWhatIf(std::vector<WhatIfStep>& steps, const std::atomic<bool>* cancel) {
  for (WhatIfStep& step : steps) {
    auto as_traced = TimeRun(step.as_traced, cancel);
    if (!as_traced) return ErrorOf(as_traced);
    step.as_traced_seconds = *as_traced;
    auto larger = TimeRun(step.larger, cancel);
    if (!larger) return ErrorOf(larger);
    step.larger_seconds = *larger;
  }
  return {};
}

WhatIfTotals TotalsOf(const std::vector<WhatIfStep>& steps) {
  WhatIfTotals totals;
  for (const WhatIfStep& s : steps) {
    totals.as_traced_seconds += s.as_traced_seconds;
    totals.larger_seconds += s.larger_seconds;
  }
  if (totals.larger_seconds > 0) totals.ratio = totals.as_traced_seconds / totals.larger_seconds;
  return totals;
}

}  // namespace iowatch::probes
