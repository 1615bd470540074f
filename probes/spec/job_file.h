// fio's job files (fio 3.33 HOWTO, "Job file format"): INI sections, one per
// job, named by their header ("[random-read]" is the job random-read);
// "[global]" sets options for the jobs after it (a later [global] adds to
// them); "key=value" (blanks around '=' allowed) or a bare "key" for a flag;
// whole-line comments starting with ';' or '#'. Expanded as fio expands
// them, when trivial: $pagesize, $ncpus, $mb_memory and ${NAME} from the
// environment. Refused with an error naming the file and line: fio's
// arithmetic "$(...)", an unset ${NAME}, "include", a line outside any
// section, an option iowatch does not implement (the job option table's
// did-you-mean applies), an invalid value.
// Thread-safety: pure functions; ReadJobFile reads the file and environment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "probes/spec/job_set.h"

namespace iowatch::probes {

// What the expansions read: injected so that tests do not depend on the host.
struct JobFileEnvironment {
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  uint64_t page_size = 4096;
  uint32_t cpus = 1;
  uint64_t memory_mib = 0;
  static JobFileEnvironment Host();  // getenv, sysconf
};

// A job file is a few kB; fio's largest examples are under 10 kB. The bound
// keeps a job_file of /dev/zero (or a runaway generator) from taking the
// daemon's memory.
inline constexpr size_t kMaxJobFileBytes = 1 << 20;

Result<JobSet> ParseJobFile(std::string_view text, const std::string& path,
                            const JobFileEnvironment& environment,
                            JobCheck check = JobCheck::kWhole);
Result<JobSet> ReadJobFile(const std::string& path, JobCheck check = JobCheck::kWhole);

}  // namespace iowatch::probes
