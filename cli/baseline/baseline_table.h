// The text tables of `iowatch baseline`: the list of stored baselines, and one
// baseline beside its recent runs. Tables fit in 100 columns; the store's base
// units (per second, bytes per second, seconds) are shown as IOPS, MiB/s and
// µs (ms or s for a latency row whose baseline is 10 ms or more). A row is one
// (op, metric); run columns go newest first, each value followed by its ratio
// to the baseline median and '!' when probes::Compare calls it bad. Runs that
// do not fit in the width continue in a further block of the same rows.
//
// Fingerprints are long (every non-default job option, the target path
// included), so the list shows an 8-hex-digit FNV-1a hash of it, "params";
// `show` prints the hash beside the whole fingerprint, so the two can be
// matched. The hash is stable across versions and hosts (FNV-1a over the
// fingerprint's bytes), but only a handle: the store keys on the fingerprint.
//
// Times are local, ISO 8601 with the offset ("2024-06-01T14:00:00+02:00").
// Thread-safety: pure functions (localtime_r for the time zone).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "probes/store/store.h"
#include "probes/verdicts/baseline.h"

namespace iowatch::daemon {

inline constexpr size_t kBaselineTableWidth = 100;

// FNV-1a (32 bits) of the fingerprint as 8 lower-case hex digits.
std::string ShortFingerprint(std::string_view fingerprint);

// "2024-06-01T14:00:00+02:00" in the local time zone.
std::string FormatLocalIso(int64_t unix_ms);

// How a baseline came to be: "learned" (by the daemon), "captured"
// (`baseline capture`: pinned, with runs) or "imported" (pinned, no runs here).
std::string_view BaselineSource(const probes::StoredBaseline& stored);

// JOB DEVICE PARAMS RUNS PINNED CREATED MODEL, one line per baseline.
std::string FormatBaselineList(std::span<const probes::StoredBaseline> baselines);

// The lines above a baseline's table in `show`: job, device, model, how and
// when it was made, and its parameters.
std::string FormatBaselineHeader(const probes::StoredBaseline& stored);
// The same for runs of parameters and device that have no baseline yet.
std::string FormatNoBaselineHeader(const probes::RunRecord& newest);

// Per (op, metric) the baseline's median ± spread, then `runs` (newest first)
// with their ratios and marks. `baseline` may be null (none learned yet): the
// runs' values alone. A blank line ends each block.
std::string FormatBaselineRuns(const probes::Baseline* baseline,
                               std::span<const probes::RunRecord> runs,
                               const probes::BaselinePolicy& policy,
                               size_t width = kBaselineTableWidth);

// The new baseline's median ± spread per metric beside the one it replaced
// (`previous` null: none), for `baseline capture`.
std::string FormatBaselineChange(const probes::Baseline& now, const probes::Baseline* previous);

// The legend under `show`'s tables: what the ratio and '!' mean under `policy`.
std::string FormatBaselineLegend(const probes::BaselinePolicy& policy);

}  // namespace iowatch::daemon
