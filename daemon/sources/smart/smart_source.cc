#include "daemon/sources/smart/smart_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/smart/smartctl_json.h"
#include "collectors/smart/smartctl_run.h"
#include "daemon/sampling/snapshot_health.h"

namespace iowatch::daemon {
namespace {

constexpr config::Setting kSmartSettings[] = {kSmartEnabled, kSmartInterval, kSmartTimeout};

// How the disks are asked, as the settings and the command say (the
// options' command, not a copy of it each sample).
struct SmartRuns {
  double interval_seconds = 0;
  double timeout_seconds = 0;
  const std::vector<std::string>& command;
};

SmartRuns RunsOf(const SamplerOptions& o) {
  const auto seconds = [&](const config::Setting& s) {
    return std::chrono::duration<double>(o.settings.Get<std::chrono::milliseconds>(s)).count();
  };
  return {seconds(kSmartInterval), seconds(kSmartTimeout), o.smart.command};
}

std::string Killed(const std::string& device, const SmartRuns& options);

// Whether smartctl said it has no SMART to read on the disk: no health, not
// asleep, and no device type fits (exit bit 0) or the device did not open
// (bit 1). Asking again changes nothing until the disk does.
bool NoSmartHere(const collectors::SmartReport& r) {
  constexpr int kNoDevice = collectors::kSmartctlCommandLine | collectors::kSmartctlOpenFailed;
  return !r.HasHealth() && !r.InStandby() && (r.exit_status & kNoDevice) != 0;
}

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
    // A run killed at the timeout that has not died yet (stuck in the
    // kernel): no other starts on the disk until it is reaped.
    std::unique_ptr<collectors::SmartctlRun> killed;
    double started = 0;
    double first_due = 0;            // when its first run may start
    bool no_smart = false;           // smartctl has none for it: not asked again
    std::optional<double> finished;  // when the last run ended
    std::optional<collectors::SmartReport> report;
    std::string error;
  };
  void Finish(const std::string& device, Disk& disk, collectors::SmartctlRun::Finished done);
  // Reaps the disk's killed run if it has died; true while it lives.
  static bool Lingers(const std::string& device, const SmartRuns& options, Disk& disk,
                      size_t& running);
  // Whether `device`'s run is due and may start (fewer than kMaxRunning run).
  static bool MayStart(const Disk& disk, const SmartRuns& options, double now, size_t running);
  // Polls the disk's run, or starts its next one when due and fewer than
  // kMaxRunning are running (`running` counts them).
  void Advance(const std::string& device, const SmartRuns& options, double now, Disk& disk,
               size_t& running);

  // smartctl runs at once, at most: a host with 60 disks does not start 60
  // processes in one sample (smartctl_exporter asks one disk at a time).
  // Killed runs count: each holds its disk's device open.
  static constexpr size_t kMaxRunning = 4;
  std::map<std::string, Disk, std::less<>> disks_;
  // Killed runs of disks no longer asked, reaped as they die.
  std::vector<std::unique_ptr<collectors::SmartctlRun>> orphans_;
  uint64_t rejected_total_ = 0;  // smartctl figures left out as out of range, since start
};

void SmartSource::Finish(const std::string& device, Disk& disk,
                         collectors::SmartctlRun::Finished done) {
  auto report = collectors::ParseSmartctlJson(done.output, "smartctl /dev/" + device);
  if (!report) {
    disk.error = fmt::format("{} (exit code {})", report.error().ToString(), done.exit_code);
    return;
  }
  rejected_total_ += report->warnings.size();
  if (report->InStandby() && disk.report) return;  // asleep: the last report stands
  if (report->HasHealth()) {
    disk.report = std::move(*report);
    disk.error.clear();
  } else {
    // smartctl's own messages name the device already ("/dev/vda: Unable to …").
    const std::string why = WhyNoHealth(*report);
    const std::string name = "/dev/" + device;
    disk.error = why.starts_with(name + ":") ? why : fmt::format("{}: {}", name, why);
    disk.no_smart = NoSmartHere(*report);
    disk.report = std::move(*report);
  }
}

std::string Killed(const std::string& device, const SmartRuns& options) {
  return fmt::format("smartctl /dev/{} did not answer within {:.0f} s: killed", device,
                     options.timeout_seconds);
}

bool SmartSource::Lingers(const std::string& device, const SmartRuns& options, Disk& disk,
                          size_t& running) {
  if (!disk.killed) return false;
  disk.killed->Poll();
  if (!disk.killed->Reaped()) {
    disk.error = fmt::format(
        "{}, and has not died yet (pid {}: stuck in the kernel, the disk hangs); no new run on "
        "it until it does",
        Killed(device, options), disk.killed->pid());
    return true;
  }
  disk.killed.reset();
  disk.error = Killed(device, options);
  --running;
  return false;
}

bool SmartSource::MayStart(const Disk& disk, const SmartRuns& options, double now, size_t running) {
  if (disk.no_smart || (!disk.finished && now < disk.first_due)) return false;
  if (disk.finished && now - *disk.finished < options.interval_seconds) return false;
  return running < kMaxRunning;  // its turn comes as others finish
}

void SmartSource::Advance(const std::string& device, const SmartRuns& options, double now,
                          Disk& disk, size_t& running) {
  if (Lingers(device, options, disk, running)) return;
  if (disk.run) {
    if (auto done = disk.run->Poll()) {
      disk.run.reset();
      disk.finished = now;
      Finish(device, disk, std::move(*done));
      --running;
    } else if (now - disk.started > options.timeout_seconds) {
      // Killed without waiting: it still counts until it is reaped.
      disk.run->Kill();
      disk.killed = std::move(disk.run);
      disk.finished = now;
      disk.error = Killed(device, options);
    }
    return;
  }
  if (!MayStart(disk, options, now, running)) return;
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
  if (!context.options->settings.Get<bool>(kSmartEnabled)) return;
  const SmartRuns options = RunsOf(*context.options);
  const double start = context.now();
  std::set<std::string, std::less<>> present;
  for (const collectors::BlockDevice& d : *context.devices) {
    if (MayHaveSmart(d)) present.insert(d.name);
  }
  for (auto it = disks_.begin(); it != disks_.end();) {
    if (present.contains(it->first)) {
      ++it;
      continue;
    }
    // A disk gone: its runs are killed, and kept until reaped.
    for (auto* run : {&it->second.run, &it->second.killed}) {
      if (*run == nullptr) continue;
      (*run)->Kill();
      orphans_.push_back(std::move(*run));
    }
    it = disks_.erase(it);
  }
  std::erase_if(orphans_, [](const auto& run) {
    run->Poll();
    return run->Reaped();
  });
  size_t running =
      orphans_.size() + static_cast<size_t>(std::ranges::count_if(disks_, [](const auto& e) {
        return e.second.run != nullptr || e.second.killed != nullptr;
      }));
  CollectorStatus status{"smart", 0, false, 0, {}, {}};
  bool healthy = false;
  size_t rank = 0;
  for (const std::string& device : present) {
    const auto [it, added] = disks_.try_emplace(device);
    Disk& disk = it->second;
    if (added) disk.first_due = start + FirstSmartRunDelay(device, rank, options.interval_seconds);
    ++rank;
    Advance(device, options, start, disk, running);
    if (!disk.finished) continue;  // the first run is still going
    out.smart.devices.push_back({device, disk.report, disk.error});
    // Figures smartctl gave out of range stay named while their report stands.
    if (disk.report && !disk.report->warnings.empty() && status.parse_error.empty()) {
      status.parse_error =
          fmt::format("smartctl /dev/{}: {}", device, disk.report->warnings.front());
    }
    healthy = healthy || disk.error.empty();
    if (!disk.error.empty() && status.error.empty()) status.error = disk.error;
  }
  // Failing only when every disk answered and none with its health.
  status.success = healthy || status.error.empty();
  if (status.success) status.error.clear();
  status.parse_errors_total = rejected_total_;
  status.duration_seconds = context.now() - start;
  out.collectors.push_back(std::move(status));
}

}  // namespace

double FirstSmartRunDelay(std::string_view device, size_t rank, double interval_seconds) {
  if (rank < kSmartImmediateDisks) return 0;
  // FNV-1a, so the same name gets the same place in every run of iowatch,
  // then a 64-bit finalizer (MurmurHash3's): FNV's high bits hardly move
  // for names that differ in their last characters (sda, sdb, …).
  uint64_t hash = 14695981039346656037ULL;
  for (const char c : device) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  hash = (hash ^ (hash >> 33)) * 0xff51afd7ed558ccdULL;
  hash = (hash ^ (hash >> 33)) * 0xc4ceb9fe1a85ec53ULL;
  hash ^= hash >> 33;
  return static_cast<double>(hash >> 11) / static_cast<double>(1ULL << 53) * interval_seconds;
}

const SourceDescriptor& SmartSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"smart"};
  static constexpr SourceDescriptor kDescriptor = Registered<SmartSource, &Snapshot::smart>({
      .name = "smart",
      .reads = "smartctl --json=c -x -n standby /dev/DISK, every collectors.smart.interval",
      .collectors = kCollectors,
      .config_switch = kSmartEnabled.key,
      .settings = kSmartSettings,
      .enabled = [](const SamplerOptions& o) { return o.settings.Get<bool>(kSmartEnabled); },
      .add_families = AddSmartFamilies,
  });
  return kDescriptor;
}

}  // namespace iowatch::daemon
