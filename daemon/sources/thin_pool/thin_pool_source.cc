#include "daemon/sources/thin_pool/thin_pool_source.h"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectors/smart/smartctl_run.h"
#include "collectors/text/sysfs_text.h"
#include "collectors/thin_pool/thin_pool.h"

namespace iowatch::daemon {
namespace {

using collectors::SmartctlRun;

constexpr config::Setting kThinPoolSettings[] = {kThinPoolEnabled, kThinPoolInterval,
                                                 kThinPoolTimeout, kThinPoolDmsetup};

struct ThinPoolRuns {
  double interval_seconds = 0;
  double timeout_seconds = 0;
  std::string dmsetup;
};

ThinPoolRuns RunsOf(const SamplerOptions& o) {
  const auto seconds = [&](const config::Setting& s) {
    return std::chrono::duration<double>(o.settings.Get<std::chrono::milliseconds>(s)).count();
  };
  return {seconds(kThinPoolInterval), seconds(kThinPoolTimeout),
          o.settings.Get<std::string>(kThinPoolDmsetup)};
}

// The host's device-mapper devices by dm name ("vg0-pool" -> "dm-3"), from
// <sysfs>/block/dm-*/dm/name; empty when there is none.
std::map<std::string, std::string, std::less<>> DmDevices(const FileTree& sysfs) {
  std::map<std::string, std::string, std::less<>> devices;
  const auto names = sysfs.List("block");
  if (!names) return devices;
  for (const std::string& device : *names) {
    if (!device.starts_with("dm-")) continue;
    const auto name = collectors::ReadSysfsText(sysfs, "block/" + device + "/dm/name");
    // A dm device without a readable name still says dm is in use.
    devices.emplace(name && *name && !(*name)->empty() ? **name : "", device);
  }
  return devices;
}

class ThinPoolSource final : public SampleSource {
 public:
  // Fills out.thin_pool and appends the "thin_pool" collector's status.
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  // The two commands of one reading, started together.
  struct Reading {
    std::unique_ptr<SmartctlRun> status;
    std::unique_ptr<SmartctlRun> table;
    std::optional<SmartctlRun::Finished> status_done;
    std::optional<SmartctlRun::Finished> table_done;
    double started = 0;
  };
  // Starts a reading where dm devices exist; says why not otherwise.
  void Begin(const FileTree& sysfs, const ThinPoolRuns& runs, double now);
  // Polls the reading; finishes it, or kills it past the timeout.
  void Advance(const ThinPoolRuns& runs, double now);
  void Finish(const ThinPoolRuns& runs, const SmartctlRun::Finished& status,
              const SmartctlRun::Finished& table);
  // A run that could not start: no dmsetup is no pools, anything else a failure.
  void NotStarted(const Error& error);
  // Keeps a run until it is reaped (one waiting in the kernel dies when it returns).
  void KeepKilled(std::unique_ptr<SmartctlRun> run);

  std::optional<Reading> reading_;
  std::vector<std::unique_ptr<SmartctlRun>> killed_;  // killed at the timeout, not yet reaped
  std::optional<double> finished_;                    // when the last reading ended
  std::map<std::string, std::string, std::less<>> devices_;  // read when a reading starts
  std::vector<collectors::ThinPool> pools_;                  // the last good result
  std::string error_;   // why the last reading failed; "" when it did not
  std::string absent_;  // what was absent, when that is why there are no pools
};

void ThinPoolSource::KeepKilled(std::unique_ptr<SmartctlRun> run) {
  if (run == nullptr || run->Reaped()) return;
  run->Kill();
  killed_.push_back(std::move(run));
}

void ThinPoolSource::NotStarted(const Error& error) {
  if (error.code == ErrorCode::kNotFound) {
    pools_.clear();
    error_.clear();
    absent_ = "no dmsetup, no thin pools read: " + error.ToString();
  } else {
    error_ = error.ToString();
  }
}

void ThinPoolSource::Begin(const FileTree& sysfs, const ThinPoolRuns& runs, double now) {
  finished_ = now;  // tried: the next try comes an interval later, whatever happens now
  devices_ = DmDevices(sysfs);
  if (devices_.empty()) {
    pools_.clear();
    error_.clear();
    absent_ = fmt::format("no device-mapper device ({}/dm-*): dmsetup not run",
                          sysfs.PathOf("block").string());
    return;
  }
  auto status = SmartctlRun::Start({runs.dmsetup, "status", "--target", "thin-pool"});
  if (!status) return NotStarted(status.error());
  auto table = SmartctlRun::Start({runs.dmsetup, "table", "--target", "thin-pool"});
  if (!table) {
    KeepKilled(std::move(*status));
    return NotStarted(table.error());
  }
  reading_ = Reading{.status = std::move(*status),
                     .table = std::move(*table),
                     .status_done = std::nullopt,
                     .table_done = std::nullopt,
                     .started = now};
  finished_.reset();
}

void ThinPoolSource::Advance(const ThinPoolRuns& runs, double now) {
  Reading& r = *reading_;
  if (!r.status_done) r.status_done = r.status->Poll();
  if (!r.table_done) r.table_done = r.table->Poll();
  if (r.status_done && r.table_done) {
    auto status = std::move(*r.status_done);
    auto table = std::move(*r.table_done);
    reading_.reset();
    finished_ = now;
    return Finish(runs, status, table);
  }
  if (now - r.started <= runs.timeout_seconds) return;
  KeepKilled(std::move(r.status));
  KeepKilled(std::move(r.table));
  reading_.reset();
  finished_ = now;
  error_ = fmt::format("{} did not answer within {:.0f} s: killed (the last pools read are served)",
                       runs.dmsetup, runs.timeout_seconds);
}

std::string ExitText(const std::string& dmsetup, std::string_view command, int exit_code) {
  const std::string what = fmt::format("{} {} --target thin-pool", dmsetup, command);
  if (exit_code < 0) return what + " was killed by a signal";
  return fmt::format(
      "{} exited with status {} (dmsetup needs CAP_SYS_ADMIN and /dev/mapper/control: "
      "\"Failure to communicate with kernel device-mapper driver\" without them)",
      what, exit_code);
}

void ThinPoolSource::Finish(const ThinPoolRuns& runs, const SmartctlRun::Finished& status,
                            const SmartctlRun::Finished& table) {
  if (status.exit_code != 0) {
    error_ = ExitText(runs.dmsetup, "status", status.exit_code);
    return;
  }
  if (table.exit_code != 0) {
    error_ = ExitText(runs.dmsetup, "table", table.exit_code);
    return;
  }
  auto statuses = collectors::ParseThinPoolStatus(status.output, "dmsetup status");
  if (!statuses) {
    error_ = statuses.error().ToString();
    return;
  }
  auto tables = collectors::ParseThinPoolTable(table.output, "dmsetup table");
  if (!tables) {
    error_ = tables.error().ToString();
    return;
  }
  pools_ = collectors::JoinThinPools(std::move(*statuses), std::move(*tables));
  for (collectors::ThinPool& pool : pools_) {
    if (const auto it = devices_.find(pool.name); it != devices_.end()) pool.device = it->second;
  }
  error_.clear();
  absent_.clear();
}

void ThinPoolSource::Collect(const FileTree& /*procfs*/, const FileTree& sysfs,
                             const SourceContext& context, Snapshot& out) {
  if (!context.options->settings.Get<bool>(kThinPoolEnabled)) return;
  const ThinPoolRuns runs = RunsOf(*context.options);
  const double start = context.now();
  std::erase_if(killed_, [](const auto& run) {
    run->Poll();
    return run->Reaped();
  });
  if (reading_) {
    Advance(runs, start);
  } else if (killed_.empty() && (!finished_ || start - *finished_ >= runs.interval_seconds)) {
    Begin(sysfs, runs, start);
  }
  out.thin_pool.pools = pools_;
  out.thin_pool.pending = reading_.has_value();
  CollectorStatus status{"thin_pool", 0, error_.empty(), 0, error_.empty() ? absent_ : error_, {}};
  status.duration_seconds = context.now() - start;
  out.collectors.push_back(std::move(status));
}

}  // namespace

const SourceDescriptor& ThinPoolSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"thin_pool"};
  static constexpr SourceDescriptor kDescriptor = Registered<ThinPoolSource, &Snapshot::thin_pool>({
      .name = "thin_pool",
      .reads = "dmsetup status and table --target thin-pool, every collectors.thin_pool.interval, "
               "where <sysfs>/block/dm-* exists",
      .collectors = kCollectors,
      .config_switch = kThinPoolEnabled.key,
      .settings = kThinPoolSettings,
      .enabled = [](const SamplerOptions& o) { return o.settings.Get<bool>(kThinPoolEnabled); },
      .add_families = AddThinPoolFamilies,
  });
  return kDescriptor;
}

}  // namespace iowatch::daemon
