// The HTML status page served at "/": what an operator reads at a glance.
// Each device with its current iostat -x columns (and %util's window
// maximum) and its health (daemon/sampling/snapshot_health.h: its first
// problem, all of them in the cell's title), the md RAID arrays when there are any (state,
// degraded, failed members, sync), the LVM thin pools, NVMe controllers, ZFS pools and
// multipath maps when there are any (storage_rows.h: problems first), the host's vmstat line,
// and each probe job's last result beside its baseline, its regression state and a sparkline
// of its recent p99 completion latency; under a regressed one, what explains it
// (probes::ExplainRegression, and what else its disk shows now: problems, SMART, the busiest
// other cgroup on it). One self-contained document (inline CSS and SVG, no script, no external
// asset) that reloads itself every 10 s; every value from the system is escaped.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "daemon/passive/passive_service.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/scheduling/probe_snapshot.h"

namespace iowatch::daemon {

struct StatusPageInput {
  const Snapshot& sample;
  const ProbeSnapshot* probes = nullptr;     // null when no probe job is configured
  const PassiveSnapshot* passive = nullptr;  // null when passive.enabled is false
  std::string_view listen_endpoint;
  double now_seconds = 0;  // wall clock, for the age of the last probe runs
  // The daemon's own cgroup, whose I/O is the probes': never named as
  // another's load on a regressed probe's disk ("" when unknown).
  std::string_view own_cgroup;
};

std::string RenderStatusPage(const StatusPageInput& input);

// An inline SVG polyline of latencies `values` in seconds (oldest first),
// scaled to their range, `width` × `height` pixels, titled with that range in
// µs; empty text for fewer than two values.
std::string Sparkline(const std::vector<double>& values, int width, int height);

}  // namespace iowatch::daemon
