#include "cli/health/health_command.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "cli/health/health_format.h"
#include "cli/health/health_options.h"
#include "cli/shared/cli_output.h"
#include "common/clock.h"
#include "common/terminal_text.h"
#include "config/config.h"
#include "config/values.h"
#include "daemon/passive/passive_service.h"
#include "daemon/sampling/snapshot_health.h"
#include "daemon/sources/kmsg/kmsg_source.h"
#include "daemon/sources/sampler.h"
#include "daemon/sources/smart/smart_source.h"
#include "daemon/sources/thin_pool/thin_pool_source.h"
#include "probes/store/store.h"

namespace iowatch::daemon {
namespace {

// A pattern matching exactly `name` (punctuation escaped: "cciss/c0d0").
std::string ExactPattern(const std::string& name) {
  std::string pattern = "^";
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0) pattern += '\\';
    pattern += c;
  }
  return pattern + "$";
}

Result<SamplerOptions> OptionsFor(const HealthOptions& o) {
  SamplerOptions options;
  const config::DeviceConfig devices;
  auto filter = o.device.empty() ? collectors::DeviceFilter::Create("", devices.exclude)
                                 : collectors::DeviceFilter::Create(ExactPattern(o.device), "");
  if (!filter) return ErrorOf(filter);
  options.filter = std::move(*filter);
  options.partitions = true;  // a partition's buffer errors belong to its disk
  options.cgroups.enabled = false;
  options.udev_data = o.udev_data;
  options.process_interval_seconds = 0;
  options.settings.Set(kKmsgEnabled, true);
  // The daemon's counts since boot, read and never written: the ring buffer
  // may no longer hold every error they counted.
  options.kmsg.state_file = (std::filesystem::path(o.state_dir) / "kmsg-errors.json").string();
  options.kmsg.save = false;
  options.settings.Set(kSmartEnabled, o.smart);
  options.settings.Set(kSmartInterval,
                       std::chrono::milliseconds(config::kMaxConfigDuration));  // one run
  options.settings.Set(kSmartTimeout,
                       std::chrono::milliseconds(std::llround(o.smart_timeout_seconds * 1000)));
  // The thin pools: one dmsetup reading, where a dm device exists.
  options.settings.Set(kThinPoolEnabled, true);
  options.settings.Set(kThinPoolInterval, std::chrono::milliseconds(config::kMaxConfigDuration));
  return options;
}

// Whether every disk that may have SMART has had its run end.
bool SmartDone(const Snapshot& s) {
  const auto may = std::ranges::count_if(*s.block_devices, MayHaveSmart);
  return static_cast<size_t>(may) <= s.smart.devices.size();
}

// The kernel log counts' warning (a state file not to be trusted), which
// only the first sample reports.
void NoteKmsgWarning(const Snapshot& s, std::vector<std::string>& notes) {
  const auto kmsg = std::ranges::find(s.collectors, "kmsg", &CollectorStatus::name);
  if (kmsg != s.collectors.end() && !kmsg->parse_error.empty()) {
    notes.push_back("kernel log errors: " + kmsg->parse_error);
  }
}

std::shared_ptr<const Snapshot> Sample(const GlobalOptions& global, const HealthOptions& o,
                                       Sampler& sampler, std::vector<std::string>& notes) {
  const FileTree procfs(global.procfs);
  const FileTree sysfs(global.sysfs);
  auto snapshot = sampler.Collect(procfs, sysfs, WallUnixSeconds());
  NoteKmsgWarning(*snapshot, notes);
  // dmsetup's timeout: its setting's default (health reads no config file).
  const double thin_timeout_seconds =
      std::chrono::duration<double>(
          config::SettingValues().Get<std::chrono::milliseconds>(kThinPoolTimeout))
          .count();
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration<double>(std::max(o.smart_timeout_seconds, thin_timeout_seconds) + 1);
  const auto waiting = [&](const Snapshot& s) {
    return (o.smart && !SmartDone(s)) || s.thin_pool.pending;
  };
  while (waiting(*snapshot) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    snapshot = sampler.Collect(procfs, sysfs, WallUnixSeconds());
  }
  return snapshot;
}

// The probe and passive series' verdicts in the daemon's store; a store
// that cannot be read is a note, not a failure: the disks' health stands
// without it.
struct StoredJudgements {
  std::vector<ProbeSeriesVerdict> probes;
  std::vector<PassiveSeriesVerdict> passive;
};

StoredJudgements StoredVerdicts(const HealthOptions& o, const Snapshot& snapshot,
                                std::vector<std::string>& notes) {
  const std::filesystem::path path = std::filesystem::path(o.state_dir) / probes::Store::kFileName;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  auto store = probes::Store::OpenReadOnly(path);
  if (!store) {
    notes.push_back("probe verdicts: " + store.error().ToString());
    return {};
  }
  StoredJudgements out;
  std::vector<probes::UnreadableSeriesState> unreadable;
  auto states = store->SeriesStates(probes::RegressionTracker(), unreadable);
  if (!states) {
    notes.push_back("probe verdicts: " + states.error().ToString());
  } else {
    // Read-only here: the daemon moves such a row aside at its next start.
    for (const probes::UnreadableSeriesState& row : unreadable) {
      notes.push_back(fmt::format("probe verdicts: {}: {}; that series left out", store->Path(),
                                  row.Describe()));
    }
    for (const probes::StoredSeriesState& s : *states) {
      out.probes.push_back({s.job, s.device, s.state.AnyRegressed()});
    }
  }
  std::vector<probes::UnreadablePassiveState> unreadable_passive;
  auto passive = store->PassiveStates(unreadable_passive);
  if (!passive) {
    notes.push_back("passive verdicts: " + passive.error().ToString());
    return out;
  }
  for (const probes::UnreadablePassiveState& row : unreadable_passive) {
    notes.push_back(fmt::format("passive verdicts: {}: {}; that series left out", store->Path(),
                                row.Describe()));
  }
  out.passive = StoredPassiveVerdicts(*passive, snapshot);
  return out;
}

}  // namespace

int RunHealth(const GlobalOptions& global, const std::vector<std::string>& args) {
  auto opts = ParseHealthArgs(args, config::Config{}.state_dir);
  if (!opts) return ReportError("health", opts.error());
  auto options = OptionsFor(*opts);
  if (!options) return ReportError("health", options.error());
  Sampler sampler(std::move(*options));
  std::vector<std::string> notes;
  const auto snapshot = Sample(global, *opts, sampler, notes);
  const StoredJudgements verdicts = StoredVerdicts(*opts, *snapshot, notes);
  HostHealth health =
      BuildHostHealth(*snapshot, verdicts.probes, verdicts.passive, opts->device, opts->smart);
  if (!opts->device.empty() && health.disks.empty() && health.zfs_pools.empty()) {
    return ReportError("health",
                       Error::NotFound("no whole disk named " + TerminalText(opts->device),
                                       global.sysfs + "/block"));
  }
  health.notes.insert(health.notes.end(), notes.begin(), notes.end());
  const Status written =
      WriteStdout(opts->json ? FormatHealthJson(health) : FormatHealthText(health));
  if (!written) return ReportError("health", written.error());
  return health.Problems() > 0 ? 1 : 0;
}

}  // namespace iowatch::daemon
