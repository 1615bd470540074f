// fio job files (`iowatch probe FILE.fio`, a daemon job's job_file): any
// text is a set of jobs or a located error, never a crash; a set's jobs are
// valid, their groups and phases never go backwards, and each job's options
// rebuild it.
#include <string>

#include "probes/spec/job_file.h"
#include "tests/fuzz/fuzz_input.h"

using iowatch::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  iowatch::probes::JobFileEnvironment env;
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    if (name == "DIR") return std::string("/srv");
    return std::nullopt;
  };
  const auto set = iowatch::probes::ParseJobFile(iowatch::fuzz::AsText(data, size), "f.fio", env);
  if (!set) {
    Require(set.error().path == "f.fio");
    return 0;
  }
  uint32_t group = 0;
  uint32_t phase = 0;
  for (const iowatch::probes::SetJob& job : set->jobs) {
    Require(iowatch::probes::ValidateJobSpec(job.spec).has_value());
    Require(job.groupid >= group && job.phase >= phase && job.phase <= job.groupid);
    group = job.groupid;
    phase = job.phase;
    auto options = iowatch::probes::OptionsOfJob(*set, set->jobs.size() == 1 ? "" : job.spec.name);
    Require(options.has_value() || set->jobs.size() > 1);  // two jobs may share a name
  }
  return 0;
}
