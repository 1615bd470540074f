#include "probes/sweep/sweep_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

namespace iowatch::probes {
namespace {

using Series = std::tuple<SweepMode, bool, bool>;  // mode, write, random

Series SeriesOf(const SweepPoint& p) { return {p.mode, p.write, p.random}; }

std::string SeriesText(const SweepPoint& p) {
  return fmt::format("{} {}{}", ToString(p.mode), p.random ? "rand" : "seq",
                     p.write ? "write" : "read");
}

std::map<Series, std::vector<const SweepSample*>> BySeries(std::span<const SweepSample> samples) {
  std::map<Series, std::vector<const SweepSample*>> series;
  for (const SweepSample& s : samples) {
    if (s.measure.end == "completed") series[SeriesOf(s.point)].push_back(&s);
  }
  return series;
}

std::optional<SweepFinding> Knee(const std::vector<const SweepSample*>& samples) {
  const auto peak = std::ranges::max_element(
      samples, {}, [](const SweepSample* s) { return s->measure.bytes_per_second; });
  if (peak == samples.end() || (*peak)->measure.bytes_per_second <= 0) return std::nullopt;
  const double top = (*peak)->measure.bytes_per_second;
  const SweepSample* knee = nullptr;
  for (const SweepSample* s : samples) {
    if (s->measure.bytes_per_second < kKneeShare * top) continue;
    if (knee == nullptr || std::tie(s->point.block_size, s->point.iodepth) <
                               std::tie(knee->point.block_size, knee->point.iodepth)) {
      knee = s;
    }
  }
  SweepFinding f{"knee", knee->point, knee->measure.bytes_per_second,
                 knee->measure.bytes_per_second / top, ""};
  f.text = fmt::format("{}: {:.0f} % of the peak {} ({} QD{}) from bs {} at QD{} ({})",
                       SeriesText(knee->point), 100 * f.ratio, RateText(top),
                       SizeText((*peak)->point.block_size), (*peak)->point.iodepth,
                       SizeText(knee->point.block_size), knee->point.iodepth, RateText(f.value));
  return f;
}

std::optional<SweepFinding> LatencyOptimal(const std::vector<const SweepSample*>& samples,
                                           SweepLatency latency) {
  uint64_t smallest = UINT64_MAX;
  for (const SweepSample* s : samples) smallest = std::min(smallest, s->point.block_size);
  const SweepSample* best = nullptr;
  const SweepSample* deepest = nullptr;
  const auto p99 = [latency](const SweepSample* s) { return s->measure.P99(latency); };
  auto score = [&](const SweepSample* s) {
    return s->measure.iops / static_cast<double>(std::max<uint64_t>(p99(s), 1));
  };
  for (const SweepSample* s : samples) {
    if (s->point.block_size != smallest || p99(s) == 0) continue;
    if (best == nullptr || score(s) > score(best)) best = s;
    if (deepest == nullptr || s->point.iodepth > deepest->point.iodepth) deepest = s;
  }
  if (best == nullptr) return std::nullopt;
  SweepFinding f{"latency_optimal_depth", best->point, best->measure.iops,
                 static_cast<double>(p99(best)), ""};
  f.text = fmt::format("{} {}: QD{} gives {:.0f} IOPS at {} p99 {:.1f} µs", SeriesText(best->point),
                       SizeText(smallest), best->point.iodepth, best->measure.iops,
                       ToString(latency), static_cast<double>(p99(best)) / 1e3);
  if (deepest != best && best->measure.iops > 0) {
    // Rounded before the sign is chosen: "+0 %", never "-0 %".
    const double gain = std::round(100 * (deepest->measure.iops / best->measure.iops - 1));
    f.text += fmt::format("; QD{} adds {:+.0f} % IOPS for {:.1f}× the p99", deepest->point.iodepth,
                          gain == 0 ? 0.0 : gain,
                          static_cast<double>(p99(deepest)) / static_cast<double>(p99(best)));
  }
  return f;
}

// Per direction and pattern: the points both buffered and direct ran.
std::vector<SweepFinding> BufferedVsDirect(std::span<const SweepSample> samples) {
  std::map<std::tuple<bool, bool, uint64_t, uint32_t>, const SweepSample*> direct;
  for (const SweepSample& s : samples) {
    if (s.point.mode == SweepMode::kDirect && s.measure.bytes_per_second > 0) {
      direct[{s.point.write, s.point.random, s.point.block_size, s.point.iodepth}] = &s;
    }
  }
  struct Tally {
    int compared = 0;
    int buffered_wins = 0;
    const SweepSample* best = nullptr;  // the buffered point with the largest lead
    double best_ratio = 0;
    double cpu_ratio = 0;
  };
  std::map<std::pair<bool, bool>, Tally> tallies;
  for (const SweepSample& s : samples) {
    if (s.point.mode != SweepMode::kBuffered || s.measure.bytes_per_second <= 0) continue;
    const auto it =
        direct.find({s.point.write, s.point.random, s.point.block_size, s.point.iodepth});
    if (it == direct.end()) continue;
    Tally& t = tallies[{s.point.write, s.point.random}];
    ++t.compared;
    const double ratio = s.measure.bytes_per_second / it->second->measure.bytes_per_second;
    if (ratio > 1.1) ++t.buffered_wins;
    if (t.best == nullptr || ratio > t.best_ratio) {
      t.best = &s;
      t.best_ratio = ratio;
      t.cpu_ratio = it->second->measure.cpu_seconds_per_gib > 0
                        ? s.measure.cpu_seconds_per_gib / it->second->measure.cpu_seconds_per_gib
                        : 0;
    }
  }
  std::vector<SweepFinding> findings;
  for (const auto& [key, t] : tallies) {
    SweepFinding f{"buffered_vs_direct", t.best->point, t.best_ratio, t.cpu_ratio, ""};
    f.text = fmt::format(
        "buffered vs direct {}{}: buffered faster by more than 10 % at {} of {} points; the "
        "most at bs {} QD{}: {:.2f}× the bandwidth for {:.2f}× the CPU per GiB",
        key.second ? "rand" : "seq", key.first ? "write" : "read", t.buffered_wins, t.compared,
        SizeText(t.best->point.block_size), t.best->point.iodepth, t.best_ratio, t.cpu_ratio);
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace

std::vector<SweepFinding> SweepFindings(std::span<const SweepSample> samples,
                                        SweepLatency latency) {
  std::vector<SweepFinding> findings;
  for (const auto& [series, members] : BySeries(samples)) {
    if (auto knee = Knee(members)) findings.push_back(std::move(*knee));
    if (auto depth = LatencyOptimal(members, latency)) findings.push_back(std::move(*depth));
  }
  for (SweepFinding& f : BufferedVsDirect(samples)) findings.push_back(std::move(f));
  return findings;
}

}  // namespace iowatch::probes
