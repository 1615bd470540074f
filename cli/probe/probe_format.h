// How `iowatch probe` prints a result: fio 3.33's JSON structure (the fields
// we measure, under fio's names and number formats, so fio JSON consumers
// parse it unchanged), a short human summary in fio's layout, and the
// one-line progress shown on a terminal.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collectors/disk/disk_util.h"
#include "probes/run/job_runner.h"
#include "probes/run/probe_result.h"

namespace iowatch::daemon {

struct ProbeReportContext {
  std::span<const probes::JobOption> job_options;  // as typed, for "job options"
  std::string target_path;
  uint32_t device_major = 0;
  uint32_t device_minor = 0;
  int64_t start_time_ms = 0;  // wall clock, ms since the epoch, when the run started
  // The target's whole disk over the measured run (fio's disk_util); absent
  // when its counters could not be read (a file on tmpfs has no disk).
  std::optional<collectors::DiskUtil> disk_util;
};

// What a run of several jobs prints: one entry per clone, or per group of
// clones summed (group_reporting: probe_report.h makes the entries).
struct ProbeReportEntry {
  probes::ProbeResult result;  // result.jobs clones
  std::span<const probes::JobOption> job_options;
  uint32_t groupid = 0;
  std::string target_path;  // the first clone's
  uint32_t device_major = 0;
  uint32_t device_minor = 0;
};

struct ProbeReport {
  std::span<const probes::JobOption> global_options;  // fio's "global options", when any
  std::vector<ProbeReportEntry> entries;
  int64_t start_time_ms = 0;
  std::vector<collectors::DiskUtil> disk_util;  // each disk the jobs' targets are on
};

// fio's JSON (jobs[], global options, disk_util[]) and its normal output:
// per entry its summary, per group "Run status group N (all jobs):" with
// fio's aggregate bandwidth (the group's bytes over its longest runtime),
// the entries' slowest and fastest, the bytes and the runtimes' range.
std::string FormatProbeJson(const ProbeReport& report);
std::string FormatProbeNormal(const ProbeReport& report);
// One job's result alone.
std::string FormatProbeJson(const probes::ProbeResult& result, const ProbeReportContext& context);
std::string FormatProbeNormal(const probes::ProbeResult& result, const ProbeReportContext& context);
// "[r=17.3MiB/s,w=0KiB/s][r=4440,w=0 IOPS][43.0%][eta 00m:05s]", no newline.
std::string FormatProgressLine(const probes::RunProgress& progress);

// fio's human units: IOPS "4440" / "12.3k"; bandwidth "17.3MiB/s (18.2MB/s)".
std::string FormatIops(double iops);
std::string FormatBandwidth(double bytes_per_second);

}  // namespace iowatch::daemon
