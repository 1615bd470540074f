#include "tests/bench/fleet/import_lines.h"

#include <fmt/format.h>

#include <functional>
#include <utility>
#include <vector>

namespace iowatch::fleet {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

// One series: the samples at the scrape points `keep` accepts.
class SeriesWriter {
 public:
  SeriesWriter(const Fleet& fleet, const DiskTimeline& t, std::string& out, LineCounts& counts)
      : fleet_(fleet), timeline_(t), out_(out), counts_(counts) {}

  // `digits`: significant digits of each value (6 for a measured figure; a
  // timestamp in seconds needs 13 to keep its milliseconds).
  void Write(std::string_view name, const Labels& labels,
             const std::function<bool(size_t, const Scrape&)>& keep,
             const std::function<double(const Scrape&)>& value, int digits = 6) {
    values_.clear();
    stamps_.clear();
    for (size_t i = 0; i < timeline_.scrapes.size(); ++i) {
      const Scrape& s = timeline_.scrapes[i];
      if (!keep(i, s)) continue;
      fmt::format_to(std::back_inserter(values_), "{}{:.{}g}", values_.empty() ? "" : ",", value(s),
                     digits);
      fmt::format_to(std::back_inserter(stamps_), "{}{}", stamps_.empty() ? "" : ",",
                     fleet_.start_ms + static_cast<int64_t>(i) * kIntervalMs);
      ++counts_.samples;
    }
    if (values_.empty()) return;
    ++counts_.series;
    fmt::format_to(std::back_inserter(out_), R"({{"metric":{{"__name__":"{}")", name);
    for (const auto& [k, v] : labels) {
      if (!v.empty()) fmt::format_to(std::back_inserter(out_), R"(,"{}":"{}")", k, v);
    }
    fmt::format_to(std::back_inserter(out_), R"(}},"values":[{}],"timestamps":[{}]}})", values_,
                   stamps_);
    out_ += '\n';
  }

 private:
  const Fleet& fleet_;
  const DiskTimeline& timeline_;
  std::string& out_;
  LineCounts& counts_;
  std::string values_;
  std::string stamps_;
};

// iowatch_disk_info's labels for the disk, as sysfs would give them for a
// whole disk (empty labels are dropped by a scrape, so they are left out).
Labels DiskInfo(const Fleet& fleet, const DiskSpec& disk, const Labels& target,
                const std::string& firmware) {
  const ModelSpec& m = fleet.models[static_cast<size_t>(disk.model)];
  Labels l = target;
  l.insert(l.end(), {{"device", DeviceOf(disk.slot)},
                     {"major", "8"},
                     {"minor", std::to_string(16 * disk.slot)},
                     {"partition", "0"},
                     {"model", m.name},
                     {"serial", fmt::format("S{:06d}{}", disk.host, disk.slot)},
                     {"firmware_rev", firmware},
                     {"vendor", m.vendor},
                     {"transport", m.transport},
                     {"size_bytes", std::to_string(m.size_bytes)},
                     {"rotational", "0"},
                     {"scheduler", "none"},
                     {"logical_block_size", "512"},
                     {"physical_block_size", "4096"},
                     {"nr_requests", "256"},
                     {"max_sectors_kb", "1280"},
                     {"read_ahead_kb", "128"},
                     {"optimal_io_size", "0"}});
  return l;
}

}  // namespace

LineCounts AppendDiskSeries(const Fleet& fleet, const DiskSpec& disk, const DiskTimeline& timeline,
                            std::string& out) {
  LineCounts counts;
  SeriesWriter w(fleet, timeline, out, counts);
  const Labels host = {{"instance", InstanceOf(disk.host)}, {"job", "iowatch"}};
  Labels probe = host;
  probe.emplace_back("probe", ProbeOf(disk.slot));
  Labels op = probe;
  op.emplace_back("op", "read");
  const auto up = [](size_t, const Scrape& s) { return s.up; };
  const auto one = [](const Scrape&) { return 1.0; };
  w.Write("iowatch_probe_iops", op, up, [](const Scrape& s) { return double{s.iops}; });
  w.Write("iowatch_probe_lat_mean_seconds", op, up,
          [](const Scrape& s) { return double{s.lat_mean_seconds}; });
  w.Write("iowatch_probe_contended", probe, up,
          [](const Scrape& s) { return s.contended ? 1.0 : 0.0; });
  const auto uncontended = [](size_t, const Scrape& s) {
    return s.up && s.uncontended_start_ms > 0;
  };
  w.Write("iowatch_probe_uncontended_iops", op, uncontended,
          [](const Scrape& s) { return double{s.uncontended_iops}; });
  w.Write("iowatch_probe_uncontended_lat_mean_seconds", op, uncontended,
          [](const Scrape& s) { return double{s.uncontended_lat_mean_seconds}; });
  w.Write(
      "iowatch_probe_uncontended_run_timestamp_seconds", probe, uncontended,
      [](const Scrape& s) { return static_cast<double>(s.uncontended_start_ms) / 1000; }, 13);
  Labels target = probe;
  target.insert(target.end(), {{"major", "8"}, {"minor", std::to_string(16 * disk.slot)}});
  w.Write("iowatch_probe_target_info", target, up, one);
  Labels job = probe;
  job.emplace_back("fingerprint", std::string(kFingerprint));
  w.Write("iowatch_probe_job_info", job, up, one);
  // The disk's identity whenever its daemon answers (from start-up, before its
  // first run; not while its host is down for its update), with the firmware
  // it had then: one series per revision.
  std::vector<std::string> firmwares = {FirmwareOf(fleet, disk, fleet.start_ms)};
  if (FirmwareOf(fleet, disk, fleet.spec.end_ms) != firmwares[0]) {
    firmwares.push_back(FirmwareOf(fleet, disk, fleet.spec.end_ms));
  }
  for (const std::string& firmware : firmwares) {
    const auto era = [&](size_t i, const Scrape&) {
      const int64_t at = fleet.start_ms + static_cast<int64_t>(i) * kIntervalMs;
      return !DownAt(disk, at) && FirmwareOf(fleet, disk, at) == firmware;
    };
    w.Write("iowatch_disk_info", DiskInfo(fleet, disk, host, firmware), era, one);
  }
  for (size_t m = 0; m < kJudgedMetrics.size(); ++m) {
    Labels l = op;
    l.emplace_back("metric", std::string(kJudgedMetrics[m]));
    const auto judged = [m](size_t, const Scrape& s) { return s.up && (s.verdicts >> m) & 1; };
    w.Write("iowatch_probe_baseline_ratio", l, judged,
            [m](const Scrape& s) { return double{s.ratio[m]}; });
    w.Write("iowatch_probe_regression", l, judged,
            [m](const Scrape& s) { return (s.regressed >> m) & 1 ? 1.0 : 0.0; });
  }
  // The passive judge's read series (daemon/metrics' passive families):
  // the regression from the series' first window, the ratio from its first
  // judged one.
  Labels passive = host;
  passive.insert(
      passive.end(),
      {{"device", DeviceOf(disk.slot)}, {"op", "read"}, {"size", "all"}, {"source", "device"}});
  w.Write(
      "iowatch_passive_regression", passive,
      [](size_t, const Scrape& s) { return s.passive_series; },
      [](const Scrape& s) { return s.passive_regressed ? 1.0 : 0.0; });
  w.Write(
      "iowatch_passive_latency_ratio", passive,
      [](size_t, const Scrape& s) { return s.passive_judged; },
      [](const Scrape& s) { return double{s.passive_ratio}; });
  // The last window's; the production totals after them are the peer
  // rules' input (fleet.rules.yml).
  w.Write(
      "iowatch_passive_observed_latency_seconds", passive,
      [](size_t, const Scrape& s) { return s.passive_series; },
      [](const Scrape& s) { return double{s.passive_observed_seconds}; });
  w.Write(
      "iowatch_passive_window_requests", passive,
      [](size_t, const Scrape& s) { return s.passive_series; },
      [](const Scrape& s) { return double{s.passive_requests}; });
  w.Write(
      "iowatch_passive_requests_total", passive,
      [](size_t, const Scrape& s) { return s.passive_series; },
      [](const Scrape& s) { return s.passive_requests_total; });
  w.Write(
      "iowatch_passive_latency_seconds_total", passive,
      [](size_t, const Scrape& s) { return s.passive_series; },
      [](const Scrape& s) { return s.passive_seconds_total; });
  w.Write(
      "iowatch_passive_judged_latency_seconds_total", passive,
      [](size_t, const Scrape& s) { return s.passive_series; },
      [](const Scrape& s) { return s.passive_judged_seconds_total; });
  w.Write(
      "iowatch_passive_predicted_latency_seconds_total", passive,
      [](size_t, const Scrape& s) { return s.passive_series; },
      [](const Scrape& s) { return s.passive_predicted_seconds_total; });
  Labels judged = passive;
  judged.emplace_back("result", "judged");
  w.Write(
      "iowatch_passive_windows_total", judged,
      [](size_t, const Scrape& s) { return s.passive_series; },
      [](const Scrape& s) { return static_cast<double>(s.passive_judged_total); });
  return counts;
}

}  // namespace iowatch::fleet
