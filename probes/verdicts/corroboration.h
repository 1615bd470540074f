// Corroboration: a run is bad only if the disk's commissioning agrees. A
// band's baseline is the median of 10 runs, off by a third of the disk's
// noise (σ/√10) and more now and then, and the load model judging a
// contended run is fitted where the runs happened to fall; against such a
// baseline three ordinary runs in a row from the noise's slow tail look like
// a regression (on the simulated fleets, 100 hosts x 30 days each: 3 to 4
// such raises per fleet, quantiles the most). The drift watch's reference (a
// day of runs, drift_watch.h) predicts the same run at its stress from 96
// or more runs: a verdict stays bad only if the run is also bad against that
// prediction, judged as against any baseline (the larger of the tolerance
// and spread_factor spreads of the disk's own noise). A disk 40 % slower or
// worse is bad against both; the drift watch's step CUSUM raises a smaller
// step (30 %) from the same reference in as many runs.
//
// Quantiles are not modelled: p50 and p90 are checked through the op's mean
// (a slower disk moves both), the tail (p99 and above) is not checked (its
// shifts are its own).
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <vector>

#include "probes/verdicts/baseline.h"

namespace iowatch::probes {

// Sets `bad` to false, with a note, on each bad verdict whose run the
// reference's prediction (`reference`: ModelBaselineAt at the run's stress)
// does not find worse by the tolerance.
void SetAsideUncorroborated(const Baseline& reference, std::span<const MetricSample> run,
                            const BaselinePolicy& policy, std::vector<MetricVerdict>& verdicts);

}  // namespace iowatch::probes
