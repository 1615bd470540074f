// The command line of `iowatch probe`: fio's own spelling, "--rw=randread
// --bs=4k --time_based", every job option passed through to the job parser
// in order, plus iowatch's output and safety flags. As on fio's command
// line, options before the first --name are global and each --name begins a
// job; or one argument names a fio job file (probes/spec/job_file.h) and
// only iowatch's flags may come with it. `--help` (or -h) asks for
// ProbeUsage(), whose job options come from the option table (probes/spec).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "cli/shared/push_options.h"
#include "common/result.h"
#include "probes/spec/job_set.h"
#include "probes/target/probe_target.h"

namespace iowatch::daemon {

enum class ProbeOutputFormat { kNormal, kJson };
enum class ProgressMode { kAuto, kAlways, kNever };

struct ProbeOptions {
  probes::JobSet jobs;  // parsed and validated; each job's options as typed
  ProbeOutputFormat format = ProbeOutputFormat::kNormal;
  probes::TargetPolicy policy;
  ProgressMode progress = ProgressMode::kAuto;  // --eta=auto|always|never, as fio
  PushOptions push;                             // --push-gateway and friends
  bool help = false;  // --help or -h: print ProbeUsage(), nothing else is parsed
};

// Errors name the argument and what is accepted.
// `args` excludes the subcommand; `policy` holds what the global flags set.
Result<ProbeOptions> ParseProbeArgs(const std::vector<std::string>& args,
                                    const probes::TargetPolicy& policy = {});

// `iowatch probe --help`: the synopsis, every job option (name, alias,
// syntax, default, help) and iowatch's own flags. docs/commands.md's
// `iowatch probe` block is this text.
std::string ProbeUsage();

}  // namespace iowatch::daemon
