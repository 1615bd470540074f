// Run classification: whether a probe run measured the disk alone
// or shared it, decided from the run's conditions (run_conditions.h), so that
// a run slowed by someone else's I/O is never taken for a slower disk.
//
//   clean      others' I/O was negligible: below min_foreign_load requests/s,
//              or at most max_foreign_share of the
//              disk's work (RunConditions::ForeignShare) and at most max_foreign_iops_ratio of the
//              probe's own request rate, and no other probe measured;
//   contended  anything more; quantiles are not judged (max_quantile); a run
//              whose thread waited for a CPU more than max_cpu_wait of the
//              time, or during which the hypervisor took more than
//              max_cpu_steal of the CPUs, is in no band: no band learns from
//              it, and it is judged only against runs of other conditions
//              (job_judge.h: the load model, or runs at least as stressed);
//   unknown    no conditions (a run stored before iowatch measured them):
//              never judged, never learned from.
//
// Load bands. A disk that is never idle still deserves a verdict, so every
// run is judged (and learned) only against runs of its own band: band 0 when
// others did under min_foreign_load (the quiet band), else the foreign load in
// requests per second, each request weighted by its size as 1 + bytes/64 KiB
// (a 4 KiB request counts ~1, a 1 MiB one 17: a request's cost on a disk is a
// fixed part plus its transfer), in bands a factor of two wide: band 1 below
// 64/s, band 2 [64, 128), band 3 [128, 256) and so on. Why bands rather
// than normalising the figures by the foreign share: how much a given load
// slows a probe depends on the device (an SSD with deep internal parallelism
// barely notices what halves a disk's IOPS), so any normalisation is a model
// that is wrong somewhere; a band baseline is learned from the device itself
// and judged against its own spread. The load comes from request counts and
// bytes, exact in diskstats, never from the probe's latencies, so a probe
// that slows down does not move its runs to another band. Nor from the run's
// span alone: a probe that saturates the disk crowds a rate-limited load out
// (healthy, a 1 MiB QD8 read left it a fifth of its rate on this VM), so the
// load is the larger of the one during the run and the one in the second
// before it, when the probe was not there (RunConditions::before). And the
// band comes from the load alone, not from its ratio to the probe's own rate
// that decides clean or contended: a slower probe makes the same load a
// larger share, and a band chosen by the ratio would hold only slow runs.
//
// Thread-safety: pure functions over plain values.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "probes/verdicts/run_conditions.h"

namespace iowatch::probes {

struct ContentionPolicy {
  double max_foreign_share = 0.10;       // others' share of the disk's work
  double max_foreign_iops_ratio = 0.10;  // others' requests per probe request
  // Below this foreign load (weighted requests per second, ForeignLoad) a run
  // is clean whatever the ratios say: a disk that got slow makes the probe's
  // own rate small, and the journal's few writes beside a probe cut to 40
  // IOPS would otherwise make every slow run "contended", in a band with no
  // baseline, and the slowdown would never be judged.
  double min_foreign_load = 50;
  // Above this share of the run the probe's thread waited for a CPU, the run
  // measured the scheduler as much as the disk: contended, in no band (no
  // band learns from it), judged only against runs of other conditions.
  double max_cpu_wait = 0.25;
  // Above this share of all CPUs' time taken by the hypervisor (steal) during
  // the run, the run measured the host's scheduling as much as the disk:
  // contended, in no band, as above. On the slowdown recording the only
  // false alarms left were runs beside 15-31 % steal (p99.9 of a 4 KiB QD1
  // write 2-3 ms against 0.2 ms, with nothing else on the disk), the same
  // job at 0.2 % steal a minute later back at 0.17 ms; on the quiet one,
  // runs at 6.6 and 7.1 % steal between others at 16-27 % (the host's
  // background steal here is 0.2 %).
  double max_cpu_steal = 0.05;
  // The window just before each run over which the disk's load is measured
  // with the probe not yet there (RunConditions::before), seconds; 0: none.
  // The run's class and band take the larger of that load and the one during
  // the run. One second: the competing loads that matter do thousands of
  // requests in it, and it holds the device's probe slot that long.
  double before_seconds = 1;
  // In a contended run, latency quantiles above this are not judged (0: none
  // is; IOPS, bandwidth and the mean always are). The quantile rules'
  // intervals assume independent I/Os, but others' load comes in bursts
  // that slow a contiguous block of the probe's I/Os, as many as the burst
  // happened to overlap the run, so a contended run's quantiles measure the
  // neighbours' timing: on the recordings every false alarm the load bands
  // left was a quantile (p99, p90, then p50 beside a 1 GB/s burst), while
  // IOPS and the mean flagged every throttle window as soon
  // (docs/benchmarks.md, "Regression verdicts: false alarms and detections").
  double max_quantile = 0;
  // Judge contended runs against baselines of their load band; false: never
  // judge them (a disk that is never idle then gets no verdict).
  bool bands = true;
  // False: every run is clean, whatever its conditions, known or not: the
  // detector before runs were classified, for the replay harness's comparison (not a
  // configuration key).
  bool classify = true;

  bool operator==(const ContentionPolicy&) const = default;
};

enum class RunClass { kUnknown, kClean, kContended };
std::string_view ToString(RunClass run_class);  // "unknown", "clean", "contended"

// The band of runs beside less than min_foreign_load (the quiet band); other
// runs have bands from kFirstLoadBand up, or kNoBand when the CPU, not the
// disk, was contended.
inline constexpr int kCleanBand = 0;
inline constexpr int kFirstLoadBand = 1;
inline constexpr int kNoBand = -1;

struct Classification {
  RunClass run_class = RunClass::kUnknown;
  int band = kCleanBand;  // kCleanBand for quiet and unknown runs
  // What the foreign load was, for logs and `baseline show`, e.g. "others did
  // 1,200 IOPS (4.7 MB/s, 31 % of the disk's work)"; "" when unknown.
  std::string load;

  bool operator==(const Classification&) const = default;
};

Classification Classify(const std::optional<RunConditions>& conditions,
                        const ContentionPolicy& policy);

// Foreign requests per second weighted by size (1 + bytes / 64 KiB each):
// the larger of the loads during the run and just before it.
double ForeignLoad(const RunConditions& conditions);
// The band of a foreign load (≥ kFirstLoadBand) and the lower and upper edges
// of a band in weighted requests per second (band 1's lower edge is 0).
int LoadBand(double weighted_requests_per_second);
double LoadBandLow(int band);
double LoadBandHigh(int band);

}  // namespace iowatch::probes
