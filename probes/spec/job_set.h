// A run of several fio jobs, as a job file or a command line with several
// --name describes one: the global options, then each job (its own options
// as written, its parsed spec, its reporting group). fio's grouping rules:
// a job with stonewall or new_group begins a new reporting group (unless its
// group has no job yet); a job with stonewall also waits for every job
// before it to end, so the jobs between two stonewalls run side by side.
// Each job runs numjobs clones.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "probes/spec/job_spec.h"

namespace iowatch::probes {

// The most jobs one run may hold, each section's numjobs added up: fio's
// MAX_JOBS ("error: maximum number of jobs (4096) reached").
inline constexpr uint32_t kMaxJobsPerRun = 4096;

// One option and where it was written (a job file's line; 0 on a command line).
struct LocatedOption {
  JobOption option;
  int line = 0;
};

struct SetJob {
  std::vector<JobOption> global;   // the global options in force for it
  std::vector<JobOption> options;  // the job's own options, for fio's "job options"
  JobSpec spec;                    // global options, then its own, validated
  uint32_t groupid = 0;
  uint32_t phase = 0;  // jobs of one phase run together; a stonewall begins the next
};

struct JobSet {
  std::vector<JobOption> global_options;  // fio's "global options"
  std::vector<SetJob> jobs;
  uint32_t Clones() const;  // the sum of the jobs' numjobs
};

// One job's options before JobSet assigns its group: the default name (a job
// file's section name), the global options in force for it, its own.
struct JobDraft {
  std::string name;
  int line = 0;  // the section header's line, for errors the job as a whole has
  std::vector<LocatedOption> global;
  std::vector<LocatedOption> own;
};

// How much of a job is checked: each option (always), and the job as a whole
// (ValidateJobSpec) unless other options will still be added to it (a daemon
// probe job builds on its defaults).
enum class JobCheck { kWhole, kOptionsOnly };

// Parses each draft (errors: "FILE:LINE: bs: expected ...", `source` being
// the file or "command line"), then assigns groups and phases.
Result<JobSet> MakeJobSet(std::vector<JobOption> global_options, std::span<const JobDraft> drafts,
                          const std::string& source, JobCheck check = JobCheck::kWhole);

// The options that make job `name` of `set` (its global options, then its
// own), for a daemon probe job that names a job file: `name` empty picks the
// only job. Errors (kInvalidArgument) name the jobs there are.
Result<std::vector<JobOption>> OptionsOfJob(const JobSet& set, std::string_view name);

// fio's command line: options before the first --name are global, each
// --name begins a job (its options follow). Without any --name: one job of
// all the options (fio would call it "(null)"; iowatch names it "iowatch").
Result<JobSet> JobSetFromArguments(std::span<const JobOption> options);

}  // namespace iowatch::probes
