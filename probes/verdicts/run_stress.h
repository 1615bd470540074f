// RunStress: what slowed a probe run besides the disk itself, in each of the
// dimensions its conditions measure: others' load on the disk (weighted
// requests per second, ForeignLoad), the hypervisor's steal, the probe
// thread's wait for a CPU, and another probe measuring meanwhile. More of
// any of them never makes a healthy probe faster, so a run can be judged
// against runs that were at least as stressed in every dimension: if it is
// worse than they were, the disk got slower (so that a busy disk on a
// shared CPU still gets verdicts).
//
// On this project's VM the hypervisor's steal slows the virtual disk itself,
// not only the probe's thread: a clean 4 KiB QD1 read's mean kernel request
// time (the disk's own ticks) went from 20 µs at 0.5 % steal to 29 µs at
// 17 %, and a 1 MiB QD8 read whose queue was never empty lost 24 % of its
// rate. So steal is a load like others' I/O, to be compared like with like,
// never a figure to correct for.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "probes/verdicts/run_conditions.h"

namespace iowatch::probes {

struct RunStress {
  double load = 0;   // others' weighted requests per second (ForeignLoad)
  double steal = 0;  // share of all CPUs the hypervisor took
  double wait = 0;   // share of the run the probe's thread waited for a CPU (0 unknown)
  bool other_probe = false;

  bool operator==(const RunStress&) const = default;
};

RunStress StressOf(const RunConditions& conditions);

// `heavier` was at least as stressed as `run` in every dimension, within the
// measurement's own noise: a load at least 90 % of the run's less 5 requests
// per second, steal and wait at most one and two points lower.
bool AtLeastAsStressed(const RunStress& heavier, const RunStress& run);

// How much more stressed `heavier` was than `run`, one unit per band of load
// (a factor of two), per 5 points of steal and per 25 points of wait (the
// default limits of a clean run), and one for another probe; for choosing
// the nearest of the heavier runs.
double ExtraStress(const RunStress& heavier, const RunStress& run);

// Of the candidates (their stresses and starts, oldest first), those at
// least as stressed as `run`, the nearest first, as few as make `runs` runs
// spanning min_age_ms; of them, `runs` spread evenly over their time, oldest
// first (as PickLearningRuns). nullopt when the heavier runs are fewer or
// span less.
std::optional<std::vector<size_t>> PickHeavierNeighbours(const RunStress& run,
                                                         std::span<const RunStress> candidates,
                                                         std::span<const int64_t> start_unix_ms,
                                                         size_t runs, int64_t min_age_ms);

}  // namespace iowatch::probes
