#include "probes/verdicts/run_class.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/enum_names.h"

namespace iowatch::probes {
namespace {

// Band 1 ends at twice this; each band after it is twice as wide. Low, so that
// a disk of 150 IOPS spreads its loads over several bands: 50 and 150 random
// requests/s are a third and all of such a disk, not one condition.
constexpr double kBandBase = 32;
// Far beyond any disk (32 × 2^60 requests/s); a nonsense figure stops here.
constexpr int kLastLoadBand = 61;

double WeightedRate(uint64_t requests, uint64_t bytes, double seconds) {
  return seconds > 0 ? RunConditions::Weighted(requests, bytes) / seconds : 0;
}

double LoadDuring(const RunConditions& c) {
  return WeightedRate(c.ForeignIos(), c.ForeignBytes(), c.seconds);
}

// The load just before the run, 0 when not measured.
double LoadBefore(const RunConditions& c) {
  if (!c.before) return 0;
  return WeightedRate(c.before->Ios(), c.before->device_bytes, c.before->seconds);
}

// Others' figures the run is classified by: during the run, or just before
// it when others did more then (RunConditions::before).
struct ForeignFigures {
  double load = 0;   // weighted requests per second
  double iops = 0;   // requests per second
  double share = 0;  // of the disk's work, the probe's own included
};

ForeignFigures Foreign(const RunConditions& c) {
  const double during = LoadDuring(c);
  const double before = LoadBefore(c);
  if (before <= during) return {during, c.ForeignIops(), c.ForeignShare()};
  const double own = WeightedRate(std::min(c.own_requests, c.device_ios), c.own_bytes, c.seconds);
  return {before, c.before->Iops(), before / (before + own)};
}

std::string DescribeLoad(const RunConditions& c) {
  std::string out =
      fmt::format("others did {:.0f} IOPS ({:.1f} MB/s, {:.0f} % of the disk's work)",
                  c.ForeignIops(), c.ForeignBytesPerSecond() / 1e6, 100 * c.ForeignShare());
  if (LoadBefore(c) > LoadDuring(c)) {
    out += fmt::format(", {:.0f} IOPS ({:.1f} MB/s) in the {:.0f} s before", c.before->Iops(),
                       c.before->BytesPerSecond() / 1e6, c.before->seconds);
  }
  return out;
}

}  // namespace

constexpr EnumName<RunClass> kRunClassNames[] = {{RunClass::kUnknown, "unknown"},
                                                 {RunClass::kClean, "clean"},
                                                 {RunClass::kContended, "contended"}};
static_assert(NamesEveryValue<kRunClassNames>());

std::string_view ToString(RunClass run_class) {
  return NameIn<RunClass>(kRunClassNames, run_class);
}

double ForeignLoad(const RunConditions& conditions) { return Foreign(conditions).load; }

int LoadBand(double weighted_requests_per_second) {
  // By comparison with the edges, which are exact powers of two, rather than
  // log2, which rounds a value just below an edge up onto it.
  int band = kFirstLoadBand;
  for (double edge = 2 * kBandBase; band < kLastLoadBand && weighted_requests_per_second >= edge;
       edge *= 2) {
    ++band;
  }
  return band;
}

double LoadBandLow(int band) {
  return band <= kFirstLoadBand ? 0 : kBandBase * std::exp2(band - kFirstLoadBand);
}

double LoadBandHigh(int band) {
  return kBandBase * std::exp2(std::max(band, 1) - kFirstLoadBand + 1);
}

Classification Classify(const std::optional<RunConditions>& conditions,
                        const ContentionPolicy& policy) {
  if (!policy.classify) return Classification{RunClass::kClean, kCleanBand, ""};
  // A span that is not a positive time measured nothing: unknown, not clean.
  if (!conditions || !std::isfinite(conditions->seconds) || conditions->seconds <= 0) return {};
  const RunConditions& c = *conditions;
  const double own_rate = static_cast<double>(c.own_requests) / c.seconds;
  const bool waited = c.cpu_wait && std::isfinite(*c.cpu_wait) && *c.cpu_wait > policy.max_cpu_wait;
  const bool stolen = std::isfinite(c.cpu_steal) && c.cpu_steal > policy.max_cpu_steal;
  const bool cpu = waited || stolen;
  const ForeignFigures others = Foreign(c);
  const bool foreign = others.load >= policy.min_foreign_load &&
                       (others.share > policy.max_foreign_share ||
                        others.iops > policy.max_foreign_iops_ratio * own_rate);
  const bool contended = cpu || c.other_probe || foreign;
  Classification out;
  out.load = DescribeLoad(c);
  if (c.other_probe) out.load += ", another probe measured meanwhile";
  if (cpu) {
    if (waited) {
      out.load +=
          fmt::format(", the probe waited for a CPU {:.0f} % of the time", 100 * *c.cpu_wait);
    }
    if (stolen) {
      out.load +=
          fmt::format(", the hypervisor took {:.0f} % of the CPUs (steal)", 100 * c.cpu_steal);
    }
    out.run_class = RunClass::kContended;
    out.band = kNoBand;
    return out;
  }
  out.run_class = contended ? RunClass::kContended : RunClass::kClean;
  // The band from others' load alone, never from the ratios to the probe's
  // own rate: beside a steady 1,800 IOPS a healthy 4 KiB QD1 write was clean
  // (others under 10 % of its requests) and a throttled one contended, so a
  // band of that load learned only the slow runs and found the next slowdown
  // normal.
  if (others.load >= policy.min_foreign_load || contended) out.band = LoadBand(others.load);
  return out;
}

}  // namespace iowatch::probes
