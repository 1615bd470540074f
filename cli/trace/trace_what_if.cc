#include "cli/trace/trace_what_if.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "cli/trace/scratch_directory.h"

namespace iowatch::daemon {
namespace {

using trace::Access;
using trace::Direction;
using trace::FileTrace;
using trace::TraceCall;
using trace::TracedFile;

probes::TracedPattern PatternOf(Access access) {
  switch (access) {
    case Access::kSequential:
      return probes::TracedPattern::kSequential;
    case Access::kBackward:
      return probes::TracedPattern::kBackward;
    case Access::kRandom:
      break;
  }
  return probes::TracedPattern::kRandom;
}

// Where the file's scratch directory goes: under --scratch-dir, else beside
// the file (its filesystem, the disk the application used).
std::string ScratchParent(const std::string& path, const TraceOptions& options) {
  if (!options.scratch_dir.empty()) return options.scratch_dir;
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// The traced run's own read time beside the cold replays of its reads.
void CompareWithTrace(const FileTrace& trace, WhatIfOutcome& outcome) {
  outcome.traced_read_seconds = static_cast<double>(trace.Call(TraceCall::kRead).ns) / 1e9;
  for (const probes::WhatIfStep& step : outcome.steps) {
    if (!step.access.write) outcome.as_traced_read_seconds += step.as_traced_seconds;
  }
  outcome.page_cache = ServedFromPageCache(outcome);
}

WhatIfOutcome ReplayOne(const TracedFile& file, const TraceOptions& options,
                        const std::atomic<bool>* cancel) {
  WhatIfOutcome outcome;
  outcome.path = file.path;
  const probes::WhatIfFile input = WhatIfInput(file);
  outcome.size = input.size;
  if (file.trace.block_device) {
    outcome.skipped = "a block device: not replayed";
    return outcome;
  }
  if (input.size > options.what_if_max_size) {
    outcome.skipped = fmt::format("{} bytes, over --what-if-max-size ({} bytes)", input.size,
                                  options.what_if_max_size);
    return outcome;
  }
  auto scratch = ScratchDirectory::Make(ScratchParent(file.path, options));
  if (!scratch) {
    outcome.skipped = scratch.error().ToString();
    return outcome;
  }
  probes::WhatIfSettings settings = WhatIfSettingsOf(options);
  settings.scratch_directory = scratch->path();
  outcome.probe_size = probes::WhatIfProbeSize(input, settings);
  auto steps = probes::PlanWhatIf(input, settings);
  if (steps) {
    if (auto ran = probes::RunWhatIf(*steps, cancel); !ran) {
      outcome.skipped = ran.error().ToString();
    }
    outcome.steps = std::move(*steps);
    outcome.totals = probes::TotalsOf(outcome.steps);
    CompareWithTrace(file.trace, outcome);
  } else {
    outcome.skipped = steps.error().message;
  }
  return outcome;  // the scratch directory and what is in it removed
}

}  // namespace

std::vector<TracedFile> FilesAcrossProcesses(const std::vector<trace::ProcessTrace>& processes) {
  std::map<std::string, FileTrace> by_path;
  for (const auto& process : processes) {
    for (const TracedFile& file : process.files) MergeInto(by_path[file.path], file.trace);
  }
  std::vector<TracedFile> files;
  files.reserve(by_path.size());
  for (auto& [path, trace] : by_path) files.push_back({path, trace});
  return files;
}

probes::WhatIfFile WhatIfInput(const TracedFile& file) {
  const FileTrace& t = file.trace;
  probes::WhatIfFile input;
  input.path = file.path;
  input.size = std::max(t.size, t.max_extent);
  input.direct = (t.open_flags & O_DIRECT) != 0;
  input.fsynced = t.Call(TraceCall::kFsync).calls != 0;
  struct Class {
    uint32_t first_seen;
    probes::TracedAccess access;
  };
  std::vector<Class> classes;
  for (Direction d : {Direction::kRead, Direction::kWrite}) {
    for (Access a : {Access::kSequential, Access::kBackward, Access::kRandom}) {
      const auto& totals = t.access[static_cast<size_t>(d)][static_cast<size_t>(a)];
      if (totals.requests == 0) continue;
      classes.push_back({totals.first_seen,
                         {d == Direction::kWrite, PatternOf(a), totals.requests, totals.bytes}});
    }
  }
  std::ranges::sort(classes, {}, &Class::first_seen);
  for (const Class& c : classes) input.accesses.push_back(c.access);
  return input;
}

bool ServedFromPageCache(const WhatIfOutcome& outcome) {
  return outcome.traced_read_seconds > 0 &&
         outcome.traced_read_seconds * 2 < outcome.as_traced_read_seconds;
}

probes::WhatIfSettings WhatIfSettingsOf(const TraceOptions& options) {
  probes::WhatIfSettings settings;
  settings.larger_engine = options.what_if_engine;
  return settings;
}

std::vector<WhatIfOutcome> RunWhatIfs(const std::vector<TracedFile>& files,
                                      const TraceOptions& options,
                                      const std::atomic<bool>* cancel) {
  std::vector<WhatIfOutcome> outcomes;
  for (const TracedFile& file : files) {
    if (cancel != nullptr && cancel->load()) break;
    outcomes.push_back(ReplayOne(file, options, cancel));
  }
  return outcomes;
}

}  // namespace iowatch::daemon
