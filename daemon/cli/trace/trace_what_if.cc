#include "daemon/cli/trace/trace_what_if.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>

namespace iowatch::daemon {
namespace {

using collectors::trace::Access;
using collectors::trace::Direction;
using collectors::trace::FileTrace;
using collectors::trace::TraceCall;
using collectors::trace::TracedFile;

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

// A new directory for the file's probe file: under --scratch-dir, else
// beside the file (its filesystem, the disk the application used).
Result<std::string> MakeScratch(const std::string& path, const TraceOptions& options) {
  const std::filesystem::path parent = options.scratch_dir.empty()
                                           ? std::filesystem::path(path).parent_path()
                                           : std::filesystem::path(options.scratch_dir);
  std::string pattern = (parent / ".iowatch-what-if.XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return ErrnoError(errno, "cannot make a scratch directory for the what-if (give --scratch-dir)",
                      parent.string());
  }
  return pattern;
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
  auto scratch = MakeScratch(file.path, options);
  if (!scratch) {
    outcome.skipped = scratch.error().ToString();
    return outcome;
  }
  probes::WhatIfSettings settings = WhatIfSettingsOf(options);
  settings.scratch_directory = *scratch;
  outcome.probe_size = probes::WhatIfProbeSize(input, settings);
  auto steps = probes::PlanWhatIf(input, settings);
  if (steps) {
    if (auto ran = probes::RunWhatIf(*steps, cancel); !ran) {
      outcome.skipped = ran.error().ToString();
    }
    outcome.steps = std::move(*steps);
    outcome.totals = probes::TotalsOf(outcome.steps);
  } else {
    outcome.skipped = steps.error().message;
  }
  std::error_code ignored;  // what is left is ours alone: the directory was made above
  std::filesystem::remove_all(*scratch, ignored);
  return outcome;
}

}  // namespace

std::vector<TracedFile> FilesAcrossProcesses(
    const std::vector<collectors::trace::ProcessTrace>& processes) {
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
