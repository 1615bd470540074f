// PassiveModel: a disk's mean latency (one op and size class, one source)
// as a function of its own load, learned from its past windows, so that a
// window is judged against what the disk did at *that* load (Perseus,
// FAST '23, fits a drive's latency against its throughput the same way).
//
//   log(latency) = a + b·log2(1 + rate/64) + b'·rate/4096
//                    + c·log2(1 + other/16 MiB/s) + d·steal + e·log2(size/4 KiB)
//
// fitted by LogLinearFit with every slope ≥ 0 but the rate band's where the
// I/O is open (InFlightGrowsWithRate: a closed-loop workload's falling line
// would be the tautology rate = depth / latency; an open one may truly be
// faster busy, its threads awake), a slope only for
// a load the windows spread over, and no prediction above the loads they
// covered (a tenth of the range beyond where sloped; where not, no further
// than ten windows vouch for, so that a few minutes of a steal burst do not
// stand for the next one): such a window is `outside`, not judged. Queue depth, utilisation and
// iowait are left out on purpose: a slower disk deepens its own queue, and a line through them
// would explain the slowdown away. The rate is safe: a closed-loop workload
// on a slower disk does fewer requests, which moves its point up and to the
// left, above a rising line.
//
// A window's mean over n requests scatters more than one over thousands,
// and a disk busy part of the time may be steadier busy than idle: the
// residuals' variance is modelled as σ²(rate) + c²/n (PassiveVariance: σ²
// linear in the rate's band where the windows spread over it, never below a
// quarter of its mean; c the requests' own coefficient of variation; both
// fitted on the squared residuals), windows are weighted by its inverse,
// and the bound at a window is
// 1 + max(tolerance, k·(e^(√(σ²(rate)(1 + h) + c²/n)) − 1)), h its leverage.
// Thread-safety: plain values.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "probes/verdicts/log_linear_fit.h"
#include "probes/verdicts/passive/passive_window.h"

namespace iowatch::probes {

struct PassivePolicy {
  uint64_t min_requests = 50;  // a window with fewer is not judged (nor learned)
  double tolerance = 0.20;     // a mean 20 % above the prediction may be bad
  double spread_factor = 3;    // k: k × the window's σ beats the tolerance when noisier
  size_t min_windows = 60;     // a model learns from at least this many windows
  int64_t min_span_ms = int64_t{3600} * 1000;  // ... spanning at least an hour
  bool operator==(const PassivePolicy&) const = default;
};

// A window the model may learn from: enough requests, no probe of iowatch's
// inside, counters that only grew, a positive mean.
bool Learnable(const PassiveWindow& w, const PassivePolicy& policy);

// A learnable window as a model keeps it: what the fit needs, in 40 bytes
// (two days of minutes of a disk's two ops in 225 KiB).
struct PassivePoint {
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  float rate = 0;
  float other_bytes_rate = 0;
  float mean_bytes = 0;
  float steal = 0;
  float mean_seconds = 0;
  uint32_t requests = 0;
  bool operator==(const PassivePoint&) const = default;
};
PassivePoint PointOf(const PassiveWindow& w);

// A window's residual variance, in log units squared:
// max(σ² + s·(load − its mean), floor) + c²/n, the load the rate's band.
struct PassiveVariance {
  double sigma2 = 0;    // σ² at the windows' mean load
  double per_load = 0;  // s: 0 unless the windows spread over the rate
  double load_mean = 0;
  double floor = 0;
  double c2 = 0;  // the requests' own coefficient of variation, squared
  double At(double load, double inverse_n) const {
    return std::max(sigma2 + per_load * (load - load_mean), floor) + c2 * inverse_n;
  }
};

struct PassivePrediction {
  double mean_seconds = 0;  // the predicted mean latency; 0 when `outside`
  double bound_ratio = 0;   // observed / predicted above this is bad
  std::string outside;      // why nothing is predicted ("rate 900/s above ...")
};

class PassiveModel {
 public:
  // The model of `windows` (learnable ones only are used); nullopt when
  // there are fewer than policy.min_windows spanning less than min_span_ms,
  // or nothing could be fitted.
  static std::optional<PassiveModel> Learn(std::span<const PassivePoint> points,
                                           const PassivePolicy& policy);
  static std::optional<PassiveModel> Learn(std::span<const PassiveWindow> windows,
                                           const PassivePolicy& policy);

  PassivePrediction At(const PassiveWindow& w, const PassivePolicy& policy) const;

  size_t Windows() const { return fit_.points; }
  double Sigma() const { return fit_.spread; }        // the model's own at its mean load, log units
  double RequestCv2() const { return variance_.c2; }  // c²: the per-request term
  // The rate band's slope: negative where latency falls with load (open loop only).
  double RateSlope() const { return fit_.use[0] ? fit_.slope[0] : 0; }
  int64_t FirstMs() const { return first_ms_; }
  int64_t LastMs() const { return last_ms_; }

 private:
  Fit fit_;
  Range range_;
  PassiveVariance variance_;
  int64_t first_ms_ = 0;
  int64_t last_ms_ = 0;
};

}  // namespace iowatch::probes
