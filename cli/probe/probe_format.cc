#include "cli/probe/probe_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/terminal_text.h"
#include "common/utf8.h"
#include "common/version.h"
#include "cli/shared/local_time.h"
#include "probes/stats/latency_histogram.h"

namespace iowatch::daemon {
namespace {

using probes::DirectionStats;
using probes::LatencyHistogram;
using probes::ProbeResult;
using probes::RunningStats;

// fio's JSON layout: two-space indentation, `"key" : value`, floats with six
// decimals ("%f", locale-independent through fmt), integers as integers.
class FioJsonWriter {
 public:
  void Open(std::string_view key) { Begin(key, '{'); }
  void OpenArray(std::string_view key) { Begin(key, '['); }
  void OpenElement() { Begin({}, '{'); }
  void Close() { End('}'); }
  void CloseArray() { End(']'); }
  void Int(std::string_view key, int64_t value) { Value(key, fmt::format("{}", value)); }
  void Uint(std::string_view key, uint64_t value) { Value(key, fmt::format("{}", value)); }
  void Float(std::string_view key, double value) {
    Value(key, std::isfinite(value) ? fmt::format("{:.6f}", value) : "0.000000");
  }
  void String(std::string_view key, std::string_view value) { Value(key, JsonString(value)); }
  std::string Finish() && {
    out_ += '\n';
    return std::move(out_);
  }

 private:
  void Separator() {
    if (!first_) out_ += ',';
    if (depth_ > 0) out_ += '\n';
    out_.append(static_cast<size_t>(depth_) * 2, ' ');
    first_ = false;
  }
  void Begin(std::string_view key, char bracket) {
    Separator();
    if (!key.empty()) out_ += JsonString(key) + " : ";
    out_ += bracket;
    ++depth_;
    first_ = true;
  }
  void End(char bracket) {
    --depth_;
    out_ += '\n';
    out_.append(static_cast<size_t>(depth_) * 2, ' ');
    out_ += bracket;
    first_ = false;
  }
  void Value(std::string_view key, const std::string& text) {
    Separator();
    out_ += JsonString(key) + " : " + text;
  }

  std::string out_;
  int depth_ = 0;
  bool first_ = true;
};

void WriteLatency(FioJsonWriter& w, std::string_view key, const RunningStats& stats,
                  const LatencyHistogram* histogram) {
  w.Open(key);
  w.Uint("min", stats.Min());
  w.Uint("max", stats.Max());
  w.Float("mean", stats.Mean());
  w.Float("stddev", stats.StdDev());
  w.Uint("N", stats.Count());
  if (histogram != nullptr && histogram->Count() > 0) {
    w.Open("percentile");
    for (const double p : probes::DefaultPercentiles()) {
      w.Uint(fmt::format("{:.6f}", p), histogram->Percentile(p));
    }
    w.Close();
  }
  w.Close();
}

void WriteDirection(FioJsonWriter& w, std::string_view key, const DirectionStats& d) {
  w.Open(key);
  w.Uint("io_bytes", d.bytes);
  w.Uint("io_kbytes", d.bytes / 1024);
  const auto bw_bytes = static_cast<uint64_t>(d.BandwidthBytesPerSecond());
  w.Uint("bw_bytes", bw_bytes);
  w.Uint("bw", bw_bytes / 1024);
  w.Float("iops", d.Iops());
  w.Uint("runtime", d.RuntimeMs());
  w.Uint("total_ios", d.ios);
  w.Uint("short_ios", d.short_ios);
  w.Uint("drop_ios", 0);  // fio's count of I/Os dropped by rate limiting; we never drop
  WriteLatency(w, "slat_ns", d.slat, nullptr);
  WriteLatency(w, "clat_ns", d.clat, &d.clat_histogram);
  WriteLatency(w, "lat_ns", d.lat, &d.lat_histogram);
  w.Close();
}

double Percent(double part_seconds, std::chrono::nanoseconds whole) {
  const double whole_seconds = std::chrono::duration<double>(whole).count();
  return whole_seconds > 0 ? 100.0 * part_seconds / whole_seconds : 0;
}

// fio's choice of unit for a latency line: nsec below 10 µs, usec below 10 ms.
struct LatencyUnit {
  const char* name;
  double divisor;
};
LatencyUnit UnitFor(uint64_t max_ns) {
  if (max_ns >= 10'000'000) return {"msec", 1e6};
  if (max_ns >= 10'000) return {"usec", 1e3};
  return {"nsec", 1};
}

void AppendLatencyLine(std::string& out, const char* label, const RunningStats& s) {
  if (s.Count() == 0) return;
  const LatencyUnit u = UnitFor(s.Max());
  fmt::format_to(std::back_inserter(out),
                 "    {} ({}): min={:.0f}, max={:.0f}, avg={:.2f}, stdev={:.2f}\n", label, u.name,
                 static_cast<double>(s.Min()) / u.divisor, static_cast<double>(s.Max()) / u.divisor,
                 s.Mean() / u.divisor, s.StdDev() / u.divisor);
}

void AppendPercentiles(std::string& out, const LatencyHistogram& h, uint64_t max_ns) {
  if (h.Count() == 0) return;
  const LatencyUnit u = UnitFor(max_ns);
  fmt::format_to(std::back_inserter(out), "    clat percentiles ({}):\n", u.name);
  const auto list = probes::DefaultPercentiles();
  for (size_t i = 0; i < list.size(); ++i) {
    out += i % 4 == 0 ? "     | " : ", ";
    const double value = static_cast<double>(h.Percentile(list[i])) / u.divisor;
    fmt::format_to(std::back_inserter(out), "{:5.2f}th=[{:5.0f}]", list[i], value);
    if (i % 4 == 3 || i + 1 == list.size()) out += i + 1 == list.size() ? "\n" : ",\n";
  }
}

// fio's num2str: at most four digits before the unit ("2000KiB", "17.3MiB").
std::string HumanBytes(double bytes, bool binary) {
  static constexpr const char* kBinary[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  static constexpr const char* kDecimal[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  const double base = binary ? 1024 : 1000;
  size_t unit = 0;
  while (bytes >= 10'000 && unit + 1 < std::size(kBinary)) {
    bytes /= base;
    ++unit;
  }
  const char* name = binary ? kBinary[unit] : kDecimal[unit];
  if (unit == 0 || bytes >= 100) return fmt::format("{:.0f}{}", bytes, name);
  return bytes >= 10 ? fmt::format("{:.1f}{}", bytes, name) : fmt::format("{:.2f}{}", bytes, name);
}

void AppendDirection(std::string& out, const char* name, const DirectionStats& d) {
  if (d.ios == 0 && d.errors == 0) return;
  fmt::format_to(std::back_inserter(out), "  {}: IOPS={}, BW={} ({}/s)({}/{}msec)\n", name,
                 FormatIops(d.Iops()), FormatBandwidth(d.BandwidthBytesPerSecond()),
                 HumanBytes(d.BandwidthBytesPerSecond(), false),
                 HumanBytes(static_cast<double>(d.bytes), true), d.RuntimeMs());
  AppendLatencyLine(out, "slat", d.slat);
  AppendLatencyLine(out, "clat", d.clat);
  AppendLatencyLine(out, " lat", d.lat);
  AppendPercentiles(out, d.clat_histogram, d.clat.Max());
  if (d.short_ios > 0 || d.errors > 0) {
    fmt::format_to(std::back_inserter(out), "    short={}, errors={}\n", d.short_ios, d.errors);
  }
}

}  // namespace

std::string FormatIops(double iops) {
  if (iops < 10'000) return fmt::format("{:.0f}", iops);
  if (iops < 10'000'000) return fmt::format("{:.1f}k", iops / 1e3);
  return fmt::format("{:.1f}M", iops / 1e6);
}

std::string FormatBandwidth(double bytes_per_second) {
  return HumanBytes(bytes_per_second, true) + "/s";
}

namespace {

// What fio has no field for: how the run ended and where it ran.
void WriteIowatchObject(FioJsonWriter& w, const ProbeReportEntry& entry) {
  const ProbeResult& result = entry.result;
  w.Open("iowatch");
  w.String("end", probes::ToString(result.end));
  w.String("error_message", result.error ? result.error->ToString() : "");
  w.String("target", entry.target_path);
  w.String("device", fmt::format("{}:{}", entry.device_major, entry.device_minor));
  w.Uint("fsyncs", result.fsyncs);
  w.Float("clat_max_relative_error", LatencyHistogram::kMaxRelativeError);
  // What the engine gave up (e.g. fixedbufs refused): the run measured
  // something other than the job asked, so a consumer must be able to see it.
  w.OpenArray("fallbacks");
  for (const probes::EngineFallback& fallback : result.fallbacks) {
    w.OpenElement();
    w.String("name", fallback.name);
    w.String("reason", fallback.reason);
    w.Close();
  }
  w.CloseArray();
  w.Close();
}

// fio's disk_util[]: the disks of the jobs' targets over the run.
void WriteDiskUtil(FioJsonWriter& w, std::span<const collectors::DiskUtil> disks) {
  w.OpenArray("disk_util");
  for (const collectors::DiskUtil& u : disks) {
    w.OpenElement();
    w.String("name", u.name);
    w.Uint("read_ios", u.read_ios);
    w.Uint("write_ios", u.write_ios);
    w.Uint("read_merges", u.read_merges);
    w.Uint("write_merges", u.write_merges);
    w.Uint("read_ticks", u.read_ticks);
    w.Uint("write_ticks", u.write_ticks);
    w.Uint("in_queue", u.in_queue);
    w.Float("util", u.util_percent);
    w.Close();
  }
  w.CloseArray();
}

void WriteOptions(FioJsonWriter& w, std::string_view key,
                  std::span<const probes::JobOption> options) {
  w.Open(key);
  // fio 3.33 lists only options given a value: a bare flag (time_based,
  // stonewall, group_reporting) is not there.
  for (const probes::JobOption& option : options) {
    if (!option.value.empty()) w.String(option.name, option.value);
  }
  w.Close();
}

void WriteJob(FioJsonWriter& w, const ProbeReportEntry& entry) {
  const ProbeResult& result = entry.result;
  w.OpenElement();
  w.String("jobname", result.spec.name);
  w.Int("groupid", entry.groupid);
  w.Int("error", result.error ? result.error->os_errno : 0);
  w.Int("eta", 0);
  w.Uint("elapsed", static_cast<uint64_t>(
                        std::chrono::duration_cast<std::chrono::seconds>(result.elapsed).count()));
  WriteOptions(w, "job options", entry.job_options);
  WriteDirection(w, "read", result.read);
  WriteDirection(w, "write", result.write);
  w.Uint("job_runtime",
         static_cast<uint64_t>(
             std::chrono::duration_cast<std::chrono::milliseconds>(result.JobRuntime()).count()));
  w.Float("usr_cpu", Percent(result.cpu.user_seconds, result.JobRuntime()));
  w.Float("sys_cpu", Percent(result.cpu.system_seconds, result.JobRuntime()));
  w.Uint("ctx", result.cpu.ContextSwitches());
  WriteIowatchObject(w, entry);
  w.Close();
}

void AppendEntry(std::string& out, const ProbeReportEntry& entry) {
  const ProbeResult& result = entry.result;
  const probes::JobSpec& s = result.spec;
  fmt::format_to(std::back_inserter(out),
                 "{}: (groupid={}, jobs={}): rw={}, bs={}, ioengine={}, iodepth={}, direct={}: {} "
                 "({}:{}): {}\n",
                 TerminalText(s.name), entry.groupid, result.jobs, probes::ToString(s.rw),
                 HumanBytes(static_cast<double>(s.block_size), true), probes::ToString(s.engine),
                 s.iodepth, s.direct ? 1 : 0, TerminalText(entry.target_path), entry.device_major,
                 entry.device_minor, probes::ToString(result.end));
  if (result.error) out += fmt::format("  error: {}\n", TerminalText(result.error->ToString()));
  for (const probes::EngineFallback& fallback : result.fallbacks) {
    out += fmt::format("  fallback: {}: {}\n", fallback.name, fallback.reason);
  }
  AppendDirection(out, "read", result.read);
  AppendDirection(out, "write", result.write);
  if (result.fsyncs > 0) out += fmt::format("  fsync: {}\n", result.fsyncs);
  fmt::format_to(std::back_inserter(out), "  cpu: usr={:.2f}%, sys={:.2f}%, ctx={}\n",
                 Percent(result.cpu.user_seconds, result.JobRuntime()),
                 Percent(result.cpu.system_seconds, result.JobRuntime()),
                 result.cpu.ContextSwitches());
}

// fio's group_run_stats for one direction of one group.
void AppendGroupDirection(std::string& out, const char* label,
                          std::span<const ProbeReportEntry> group,
                          const DirectionStats ProbeResult::*direction) {
  uint64_t bytes = 0;
  uint64_t min_run = UINT64_MAX;
  uint64_t max_run = 0;
  double min_bw = 0;
  double max_bw = 0;
  bool any = false;
  for (const ProbeReportEntry& entry : group) {
    const DirectionStats& d = entry.result.*direction;
    if (d.RuntimeMs() == 0) continue;
    const double bw = d.BandwidthBytesPerSecond();
    min_bw = any ? std::min(min_bw, bw) : bw;
    max_bw = any ? std::max(max_bw, bw) : bw;
    min_run = std::min(min_run, d.RuntimeMs());
    max_run = std::max(max_run, d.RuntimeMs());
    bytes += d.bytes;
    any = true;
  }
  if (!any) return;
  DirectionStats total;  // fio's agg: the group's bytes over its longest runtime
  total.bytes = bytes;
  total.runtime = std::chrono::milliseconds(max_run);
  const double aggregate = total.BandwidthBytesPerSecond();
  fmt::format_to(std::back_inserter(out),
                 "  {:>6}: bw={} ({}/s), {}-{} ({}/s-{}/s), io={} ({}), run={}-{}msec\n", label,
                 FormatBandwidth(aggregate), HumanBytes(aggregate, false), FormatBandwidth(min_bw),
                 FormatBandwidth(max_bw), HumanBytes(min_bw, false), HumanBytes(max_bw, false),
                 HumanBytes(static_cast<double>(bytes), true),
                 HumanBytes(static_cast<double>(bytes), false), min_run, max_run);
}

void AppendRunStatus(std::string& out, std::span<const ProbeReportEntry> entries) {
  for (size_t first = 0; first < entries.size();) {
    size_t end = first;
    while (end < entries.size() && entries[end].groupid == entries[first].groupid) ++end;
    const auto group = entries.subspan(first, end - first);
    fmt::format_to(std::back_inserter(out), "\nRun status group {} (all jobs):\n",
                   entries[first].groupid);
    AppendGroupDirection(out, "READ", group, &ProbeResult::read);
    AppendGroupDirection(out, "WRITE", group, &ProbeResult::write);
    first = end;
  }
}

ProbeReport SingleReport(const ProbeResult& result, const ProbeReportContext& context) {
  ProbeReport report;
  report.start_time_ms = context.start_time_ms;
  report.entries.push_back({result, context.job_options, 0, context.target_path,
                            context.device_major, context.device_minor});
  if (context.disk_util) report.disk_util.push_back(*context.disk_util);
  return report;
}

}  // namespace

std::string FormatProbeJson(const ProbeReport& report) {
  FioJsonWriter w;
  w.OpenElement();
  w.String("fio version", std::string("iowatch-") + kVersion);
  w.Int("timestamp", report.start_time_ms / 1000);
  w.Int("timestamp_ms", report.start_time_ms);
  w.String("time", FormatLocal(report.start_time_ms, "%a %b %e %H:%M:%S %Y"));
  if (!report.global_options.empty()) WriteOptions(w, "global options", report.global_options);
  w.OpenArray("jobs");
  for (const ProbeReportEntry& entry : report.entries) WriteJob(w, entry);
  w.CloseArray();
  if (!report.disk_util.empty()) WriteDiskUtil(w, report.disk_util);
  w.Close();
  return std::move(w).Finish();
}

std::string FormatProbeNormal(const ProbeReport& report) {
  std::string out;
  for (const ProbeReportEntry& entry : report.entries) AppendEntry(out, entry);
  AppendRunStatus(out, report.entries);
  if (!report.disk_util.empty()) out += "\nDisk stats (read/write):\n";
  for (const collectors::DiskUtil& u : report.disk_util) {
    fmt::format_to(std::back_inserter(out),
                   "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2f}%\n",
                   TerminalText(u.name), u.read_ios, u.write_ios, u.read_merges, u.write_merges,
                   u.read_ticks, u.write_ticks, u.in_queue, u.util_percent);
  }
  return out;
}

std::string FormatProbeJson(const ProbeResult& result, const ProbeReportContext& context) {
  return FormatProbeJson(SingleReport(result, context));
}

std::string FormatProbeNormal(const ProbeResult& result, const ProbeReportContext& context) {
  return FormatProbeNormal(SingleReport(result, context));
}

std::string FormatProgressLine(const probes::RunProgress& p) {
  const auto eta_s =
      std::chrono::ceil<std::chrono::seconds>(p.eta).count();  // 0.9 s left reads 1 s
  return fmt::format("[r={},w={}][r={},w={} IOPS][{:.1f}%{}][eta {:02d}m:{:02d}s]",
                     FormatBandwidth(p.read_bytes_per_second),
                     FormatBandwidth(p.write_bytes_per_second), FormatIops(p.read_iops),
                     FormatIops(p.write_iops), 100 * p.fraction_done, p.ramping ? " ramp" : "",
                     eta_s / 60, eta_s % 60);
}

}  // namespace iowatch::daemon
