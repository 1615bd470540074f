#include "probes/spec/job_set.h"

#include <fmt/format.h>

namespace iowatch::probes {
namespace {

Status Apply(JobSpec& spec, const LocatedOption& located, const std::string& source) {
  if (auto ok = ApplyJobOption(spec, located.option.name, located.option.value); !ok) {
    Error error = ok.error();
    error.path = source;
    error.line = located.line;
    return std::unexpected(std::move(error));
  }
  return {};
}

Result<JobSpec> ParseDraft(const JobDraft& draft, const std::string& source, JobCheck check) {
  JobSpec spec;
  if (!draft.name.empty()) {
    if (auto ok = Apply(spec, {{"name", draft.name}, draft.line}, source); !ok) {
      return ErrorOf(ok);
    }
  }
  for (const auto* list : {&draft.global, &draft.own}) {
    for (const LocatedOption& located : *list) {
      if (auto ok = Apply(spec, located, source); !ok) return ErrorOf(ok);
    }
  }
  if (auto ok = check == JobCheck::kWhole ? ValidateJobSpec(spec) : Status(); !ok) {
    Error error = ok.error();
    error.path = source;
    error.line = draft.line;
    error.message = fmt::format("job {:?}: {}", spec.name, error.message);
    return std::unexpected(std::move(error));
  }
  return spec;
}

}  // namespace

uint32_t JobSet::Clones() const {
  uint32_t clones = 0;
  for (const SetJob& job : jobs) clones += job.spec.numjobs;
  return clones;
}

Result<JobSet> MakeJobSet(std::vector<JobOption> global_options, std::span<const JobDraft> drafts,
                          const std::string& source, JobCheck check) {
  JobSet set;
  set.global_options = std::move(global_options);
  uint32_t clones = 0;
  for (const JobDraft& draft : drafts) {
    auto spec = ParseDraft(draft, source, check);
    if (!spec) return ErrorOf(spec);
    clones += spec->numjobs;  // each at most numjobs' range (256): no overflow before the check
    if (clones > kMaxJobsPerRun) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("job {:?}: {} jobs in the run (numjobs of each section added "
                                   "up): expected at most {}, as fio",
                                   spec->name, clones, kMaxJobsPerRun),
                       source, draft.line);
    }
    SetJob job;
    for (const LocatedOption& located : draft.global) job.global.push_back(located.option);
    for (const LocatedOption& located : draft.own) job.options.push_back(located.option);
    if (!set.jobs.empty()) {
      const SetJob& previous = set.jobs.back();
      job.groupid = previous.groupid + (spec->stonewall || spec->new_group ? 1 : 0);
      job.phase = previous.phase + (spec->stonewall ? 1 : 0);
    }
    job.spec = std::move(*spec);
    set.jobs.push_back(std::move(job));
  }
  if (set.jobs.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "no job: a job needs a section ([name])", source);
  }
  return set;
}

Result<std::vector<JobOption>> OptionsOfJob(const JobSet& set, std::string_view name) {
  std::string names;
  for (const SetJob& job : set.jobs) {
    if (name.empty() ? set.jobs.size() == 1 : job.spec.name == name) {
      std::vector<JobOption> options = job.global;
      options.insert(options.end(), job.options.begin(), job.options.end());
      std::erase_if(options, [](const JobOption& o) { return o.name == "name"; });
      return options;
    }
    names += fmt::format("{}{:?}", names.empty() ? "" : ", ", job.spec.name);
  }
  return MakeError(
      ErrorCode::kInvalidArgument,
      name.empty() ? fmt::format("the file has {} jobs ({}): say which one", set.jobs.size(), names)
                   : fmt::format("no job {:?} in the file (it has {})", name, names));
}

Result<JobSet> JobSetFromArguments(std::span<const JobOption> options) {
  std::vector<JobOption> global;
  std::vector<JobDraft> drafts;
  for (const JobOption& option : options) {
    if (option.name == "name") drafts.emplace_back();
    if (drafts.empty()) {
      global.push_back(option);
    } else {
      drafts.back().own.push_back({option, 0});
    }
  }
  if (drafts.empty()) {
    drafts.emplace_back();
    for (const JobOption& option : global) drafts.back().own.push_back({option, 0});
    global.clear();
  }
  for (JobDraft& draft : drafts) {
    for (const JobOption& option : global) draft.global.push_back({option, 0});
  }
  return MakeJobSet(std::move(global), drafts, "");
}

}  // namespace iowatch::probes
