#include "daemon/sources/smart/smart_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "collectors/smart/smartctl_json.h"
#include "collectors/smart/smartctl_run.h"
#include "daemon/sampling/snapshot_health.h"

namespace iowatch::daemon {
namespace {

// What an exit status without health says, from smartctl(8)'s bits.
std::string WhyNoHealth(const collectors::SmartReport& r) {
  std::string why = r.messages.empty() ? "smartctl read no health" : r.messages;
  if (r.exit_status & collectors::kSmartctlCommandLine) {
    why += " (exit status bit 0: no device type fits, or a bad command line)";
  }
  if (r.exit_status & collectors::kSmartctlOpenFailed) why += " (exit status bit 1: open failed)";
  if (r.exit_status & collectors::kSmartctlCommandFailed) {
    why += " (exit status bit 2: a SMART command failed)";
  }
  return why;
}

class SmartSource final : public SampleSource {
 public:
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  struct Disk {
    std::unique_ptr<collectors::SmartctlRun> run;
    double started = 0;
    std::optional<double> finished;  // when the last run ended
    std::optional<collectors::SmartReport> report;
    std::string error;
  };
  void Finish(const std::string& device, Disk& disk, collectors::SmartctlRun::Finished done);
  // Polls the disk's run, or starts its next one when due and fewer than
  // kMaxRunning are running (`running` counts them).
  void Advance(const std::string& device, const SmartSourceOptions& options, double now, Disk& disk,
               size_t& running);

  // smartctl runs at once, at most: a host with 60 disks does not start 60
  // processes in one sample (smartctl_exporter asks one disk at a time).
  static constexpr size_t kMaxRunning = 4;
  std::map<std::string, Disk, std::less<>> disks_;
};

void SmartSource::Finish(const std::string& device, Disk& disk,
                         collectors::SmartctlRun::Finished done) {
  auto report = collectors::ParseSmartctlJson(done.output, "smartctl /dev/" + device);
  if (!report) {
    disk.error = fmt::format("{} (exit code {})", report.error().ToString(), done.exit_code);
    return;
  }
  if (report->InStandby() && disk.report) return;  // asleep: the last report stands
  if (report->HasHealth()) {
    disk.report = std::move(*report);
    disk.error.clear();
  } else {
    // smartctl's own messages name the device already ("/dev/vda: Unable to …").
    const std::string why = WhyNoHealth(*report);
    const std::string name = "/dev/" + device;
    disk.error = why.starts_with(name + ":") ? why : fmt::format("{}: {}", name, why);
    disk.report = std::move(*report);
  }
}

void SmartSource::Advance(const std::string& device, const SmartSourceOptions& options, double now,
                          Disk& disk, size_t& running) {
  if (disk.run) {
    if (auto done = disk.run->Poll()) {
      disk.run.reset();
      disk.finished = now;
      Finish(device, disk, std::move(*done));
      --running;
    } else if (now - disk.started > options.timeout_seconds) {
      disk.run.reset();  // kills it
      disk.finished = now;
      disk.error = fmt::format("smartctl /dev/{} did not answer within {:.0f} s: killed", device,
                               options.timeout_seconds);
      --running;
    }
    return;
  }
  if (disk.finished && now - *disk.finished < options.interval_seconds) return;
  if (running >= kMaxRunning) return;  // its turn comes as others finish
  std::vector<std::string> argv = options.command;
  for (const char* arg : {"--json=c", "-x", "-n", "standby"}) argv.emplace_back(arg);
  argv.push_back("/dev/" + device);
  auto run = collectors::SmartctlRun::Start(argv);
  if (!run) {
    disk.finished = now;
    disk.error = run.error().ToString();
    return;
  }
  disk.run = std::move(*run);
  disk.started = now;
  ++running;
}

void SmartSource::Collect(const FileTree& /*procfs*/, const FileTree& /*sysfs*/,
                          const SourceContext& context, Snapshot& out) {
  const SmartSourceOptions& options = context.options->smart;
  if (!options.enabled) return;
  const double start = context.now();
  std::set<std::string, std::less<>> present;
  for (const collectors::BlockDevice& d : *context.devices) {
    if (MayHaveSmart(d)) present.insert(d.name);
  }
  std::erase_if(disks_, [&](const auto& e) { return !present.contains(e.first); });
  size_t running = static_cast<size_t>(
      std::ranges::count_if(disks_, [](const auto& e) { return e.second.run != nullptr; }));
  CollectorStatus status{"smart", 0, false, 0, {}, {}};
  bool healthy = false;
  for (const std::string& device : present) {
    Disk& disk = disks_[device];
    Advance(device, options, start, disk, running);
    if (!disk.finished) continue;  // the first run is still going
    out.smart.devices.push_back({device, disk.report, disk.error});
    healthy = healthy || disk.error.empty();
    if (!disk.error.empty() && status.error.empty()) status.error = disk.error;
  }
  // Failing only when every disk answered and none with its health.
  status.success = healthy || status.error.empty();
  if (status.success) status.error.clear();
  status.duration_seconds = context.now() - start;
  out.collectors.push_back(std::move(status));
}

}  // namespace

const SourceDescriptor& SmartSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"smart"};
  static constexpr SourceDescriptor kDescriptor = Registered<SmartSource, &Snapshot::smart>({
      .name = "smart",
      .reads = "smartctl --json=c -x -n standby /dev/DISK, every collectors.smart.interval",
      .collectors = kCollectors,
      .config_switch = "collectors.smart.enabled",
      .enabled = [](const SamplerOptions& o) { return o.smart.enabled; },
      .add_families = AddSmartFamilies,
  });
  return kDescriptor;
}

}  // namespace iowatch::daemon
