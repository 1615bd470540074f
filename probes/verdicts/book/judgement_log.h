// The journal lines of judging a probe run: the baseline it learned, each
// regression it raised or cleared and, at debug, the load it was judged
// under. A raise is one line that explains itself (ExplainRegression:
// how much worse against the baseline and the first day, since when, judged
// against which runs under what load, and the judged run's load).
// Thread-safety: stateless; spdlog's default logger.
#pragma once

#include <functional>

#include "probes/verdicts/job_judge.h"
#include "probes/verdicts/regression_facts.h"

namespace iowatch::probes {

// The facts of a raise, from the recorder that knows the series.
using ExplainChange = std::function<RegressionFacts(const RegressionChange&)>;

void LogJudgement(const RunRecord& run, const RunJudgement& judgement,
                  const ExplainChange& explain);

}  // namespace iowatch::probes
