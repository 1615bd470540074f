#include "cli/sweep/sweep_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <optional>

#include "cli/shared/cli_output.h"
#include "cli/shared/local_time.h"
#include "cli/shared/stop_signal.h"
#include "cli/sweep/sweep_options.h"
#include "cli/sweep/sweep_output.h"
#include "collectors/disk/block_devices.h"
#include "common/clock.h"
#include "common/file_tree.h"
#include "common/terminal_text.h"
#include "config/config.h"
#include "daemon/metrics/sweep_metrics_renderer.h"
#include "probes/pipeline/run_probe.h"
#include "probes/store/store.h"
#include "probes/sweep/sweep_report.h"
#include "probes/target/page_cache.h"

namespace iowatch::daemon {
namespace {

std::filesystem::path StateDir(const SweepOptions& o) {
  return std::filesystem::path(o.state_dir.empty() ? config::Config{}.state_dir : o.state_dir);
}

// The device under the target: a block device itself, else the filesystem's.
std::optional<collectors::BlockDevice> DiskOf(const probes::JobSpec& base,
                                              const std::string& sysfs) {
  const std::string path = base.filename.empty() ? base.directory : base.filename;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  const dev_t device = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
  return collectors::FindWholeDisk(FileTree(sysfs), major(device), minor(device));
}

std::string IdentityOf(const collectors::BlockDevice& disk) {
  std::string identity = disk.model;
  const std::string& id = !disk.serial.empty() ? disk.serial : disk.wwn;
  if (!id.empty()) identity += (identity.empty() ? "" : " ") + id;
  return identity;
}

struct PointRun {
  probes::SweepSample sample;
  bool failed = false;
};

PointRun RunPoint(const SweepOptions& o, const probes::JobSpec& raw_base,
                  const probes::SweepPoint& point, std::chrono::milliseconds runtime) {
  PointRun run{{point, {}}, false};
  const bool raw = point.mode == probes::SweepMode::kRaw;
  if (raw && point.write && !o.policy.destructive) {
    run.sample.measure.end = "skipped";  // raw writes only with --destructive
    return run;
  }
  const probes::JobSpec spec = probes::PointSpec(raw ? raw_base : o.base, point, runtime);
  if (point.mode == probes::SweepMode::kBuffered) probes::DropCachedPages(spec.TargetPath());
  probes::ProbeRunOptions options;
  options.policy = o.policy;
  options.run.cancel = &StopOnSignals();
  auto outcome = probes::RunProbe(spec, options);
  if (!outcome) {
    (void)ReportError("sweep", outcome.error());
    run.sample.measure.end = "error";
    run.failed = true;
    return run;
  }
  run.sample.measure = probes::MeasureOf(outcome->result, point.write);
  if (outcome->result.error) (void)ReportError("sweep", *outcome->result.error);
  run.failed = outcome->result.end == probes::RunEnd::kFailed;
  return run;
}

// The report with its names (the user's target, sysfs' device and identity)
// as a terminal may show them, for the table and --compare.
probes::SweepReport ForTerminal(probes::SweepReport report) {
  for (std::string* name : {&report.target, &report.device, &report.identity}) {
    *name = TerminalText(*name);
  }
  return report;
}

int ListOrCompare(const SweepOptions& o) {
  auto store = probes::Store::OpenReadOnly(StateDir(o) / probes::Store::kFileName);
  if (!store) return ReportError("sweep", store.error());
  std::string out;
  if (o.list) {
    auto sweeps = store->ListSweeps();
    if (!sweeps) return ReportError("sweep", sweeps.error());
    for (const probes::SweepRecord& s : *sweeps) {
      out += fmt::format("{:>5}  {}  {:<10} {:<30} {}\n", s.id,
                         FormatLocal(s.started_unix_ms, "%Y-%m-%d %H:%M"), TerminalText(s.device),
                         TerminalText(s.identity), TerminalText(s.target));
    }
  } else {
    std::vector<probes::SweepReport> reports;
    for (const int64_t id : {o.compare->first, o.compare->second}) {
      auto record = store->GetSweep(id);
      if (!record) return ReportError("sweep", record.error());
      auto report = probes::ParseSweepJson(record->report_json);
      if (!report) return ReportError("sweep", report.error());
      reports.push_back(ForTerminal(std::move(*report)));
    }
    out = probes::CompareSweeps(reports[0], reports[1], o.latency);
  }
  if (Status w = WriteStdout(out); !w) return ReportError("sweep", w.error());
  return 0;
}

Status Emit(const SweepOptions& o, const probes::SweepReport& report) {
  if (!o.svg_file.empty()) {
    std::ofstream svg(o.svg_file);
    svg << SweepSvg(report);
    if (!svg.flush()) return MakeError(ErrorCode::kIo, "cannot write the chart", o.svg_file);
  }
  switch (o.output) {
    case SweepOutput::kJson:
      return WriteStdout(probes::SweepJson(report));
    case SweepOutput::kSvg:
      return WriteStdout(SweepSvg(report));
    case SweepOutput::kTable:
      break;
  }
  return WriteStdout(SweepTable(ForTerminal(report)));
}

// Every point of the grid, until the last or a stop signal; true when one failed.
bool RunPoints(const SweepOptions& o, const probes::JobSpec& raw_base,
               std::chrono::milliseconds runtime, const std::atomic<bool>& stop,
               probes::SweepReport& report) {
  const std::vector<probes::SweepPoint> points = probes::SweepPoints(o.grid);
  const bool progress = isatty(STDERR_FILENO) == 1;
  bool failed = false;
  for (size_t i = 0; i < points.size() && !stop.load(); ++i) {
    if (progress) {
      (void)std::fprintf(stderr, "\r[%zu/%zu] %s\033[K", i + 1, points.size(),
                         probes::PointName(points[i]).c_str());
    }
    PointRun run = RunPoint(o, raw_base, points[i], runtime);
    failed = failed || run.failed;
    report.samples.push_back(std::move(run.sample));
  }
  if (progress) (void)std::fputs("\r\033[K", stderr);
  return failed;
}

// Why a sweep is not kept, when no point completed (each failed or was
// skipped): it measured nothing, and stored it would only stand in --list
// and --compare as a device that does 0 IOPS.
std::optional<std::string> NothingMeasured(const probes::SweepReport& report) {
  size_t failed = 0;
  size_t skipped = 0;
  for (const probes::SweepSample& s : report.samples) {
    if (s.measure.end == probes::ToString(probes::RunEnd::kCompleted)) return std::nullopt;
    ++(s.measure.end == "skipped" ? skipped : failed);
  }
  return fmt::format("no point completed ({} failed, {} skipped)", failed, skipped);
}

// A whole sweep kept: in the store (unless --no-store), then at the gateway.
Status StoreAndPush(const SweepOptions& o, std::optional<probes::Store>& store,
                    const probes::SweepReport& report) {
  if (store) {
    auto id = store->AddSweep({0, report.started_unix_ms, report.device, report.identity,
                               report.target, probes::SweepJson(report)});
    if (!id) return ErrorOf(id);
    (void)std::fprintf(stderr, "iowatch sweep: stored as sweep %lld\n",
                       static_cast<long long>(*id));
  }
  if (o.push.url.empty()) return {};
  std::string pushed;
  RenderSweepMetrics(report, pushed);
  return PushResults(o.push, "iowatch_sweep", pushed);
}

}  // namespace

int RunSweep(const GlobalOptions& global, const std::vector<std::string>& args) {
  probes::TargetPolicy defaults;
  defaults.sysfs = global.sysfs;
  auto parsed = ParseSweepArgs(args, defaults);
  if (!parsed) return ReportError("sweep", parsed.error());
  const SweepOptions& o = *parsed;
  if (o.help) return WriteStdout(SweepUsage()) ? 0 : 1;
  if (o.list || o.compare) return ListOrCompare(o);

  // Opened first, so that a sweep that cannot be stored does not run.
  std::optional<probes::Store> store;
  if (o.store) {
    auto opened = probes::Store::OpenInStateDir(StateDir(o));
    if (!opened) return ReportError("sweep", opened.error());
    store = std::move(*opened);
  }
  const auto disk = DiskOf(o.base, o.policy.sysfs.string());
  probes::JobSpec raw_base = o.base;
  if (disk) {
    raw_base.filename = "/dev/" + disk->name;
    raw_base.directory.clear();
    raw_base.size = 0;
    raw_base.offset = 0;
  }
  const auto runtime = *probes::PointRuntime(o.grid);
  probes::SweepReport report;
  report.started_unix_ms = WallUnixMs();
  report.target = o.base.TargetPath();
  report.device = disk ? disk->name : "";
  report.identity = disk ? IdentityOf(*disk) : "";
  report.engine = std::string(probes::ToString(o.base.engine));
  report.size = o.base.size;
  report.budget_ms = std::chrono::duration_cast<std::chrono::milliseconds>(o.grid.budget).count();
  report.point_runtime_ms = runtime.count();
  report.latency = o.latency;

  const std::atomic<bool>& stop = StopOnSignals();
  const bool failed = RunPoints(o, raw_base, runtime, stop, report);
  report.findings = probes::SweepFindings(report.samples, report.latency);
  if (Status w = Emit(o, report); !w) return ReportError("sweep", w.error());
  const bool interrupted = stop.load();
  const std::optional<std::string> nothing = NothingMeasured(report);
  if (nothing && !interrupted && (store || !o.push.url.empty())) {
    (void)std::fprintf(stderr, "iowatch sweep: not %s: %s\n", store ? "stored" : "pushed",
                       nothing->c_str());
  }
  if (!interrupted && !nothing) {
    if (Status kept = StoreAndPush(o, store, report); !kept)
      return ReportError("sweep", kept.error());
  }
  return failed || interrupted ? 1 : 0;
}

}  // namespace iowatch::daemon
