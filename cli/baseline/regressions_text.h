// The standing regressions of a job in `iowatch baseline show`: each series'
// regressed metrics, one line each that explains it as the daemon's journal
// does (probes::ExplainRegression): how much worse against the baseline of
// its newest judged-able run's band and against the series' first day,
// since when, judged against which runs under what load beside that run's.
// Read from the store's series states (what the daemon keeps across
// restarts), so it is the daemon's view even while it is not running.
// Thread-safety: as the Store's.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "probes/store/store.h"
#include "probes/verdicts/baseline.h"
#include "probes/verdicts/regression_facts.h"

namespace iowatch::daemon {

// "regressions of JOB on DEVICE (params HASH):\n  read iops: 0.50x …\n\n";
// "" when none stands.
std::string FormatRegressions(std::string_view job, std::string_view device,
                              std::string_view fingerprint,
                              std::span<const probes::RegressionFacts> facts);

// Appends the job's standing regressions, every series of it (nothing when
// none stands).
Status AppendRegressions(const probes::Store& store, std::string_view job,
                         const probes::BaselinePolicy& policy, std::string& out);

}  // namespace iowatch::daemon
