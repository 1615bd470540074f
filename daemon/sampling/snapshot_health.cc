#include "daemon/sampling/snapshot_health.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <optional>
#include <set>

#include "collectors/smart/smartctl_json.h"
#include "common/block_status.h"

namespace iowatch::daemon {
namespace {

using collectors::SmartReport;

// The alerts' floors (IowatchFilesystemAlmostOutOfSpace, …AlmostOutOfFiles).
constexpr double kFloorPercent = 5;
// IowatchNvmeWearHigh's.
constexpr uint64_t kWearPercent = 80;

// ATA attributes worth a line, by id; pending (197) and offline
// uncorrectable (198) sectors are problems: data the disk cannot read.
struct AtaFact {
  uint32_t id;
  const char* label;
  bool problem;
};
constexpr AtaFact kAtaFacts[] = {{5, "reallocated sectors", false},
                                 {197, "pending sectors", true},
                                 {198, "offline uncorrectable sectors", true},
                                 {199, "interface CRC errors", false}};

double Percent(uint64_t part, uint64_t whole) {
  return 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

FilesystemHealth FilesystemOf(const FilesystemSeries& f) {
  FilesystemHealth h{f.mount_point, f.device, f.fstype, {}, {}, {}, {}, f.readonly, !f.usage, 0};
  if (f.ext4_errors) h.errors += f.ext4_errors->count;
  for (const auto& device : f.btrfs_errors) {
    for (const uint64_t n : device.counts) h.errors += n;
  }
  if (!f.usage) return h;
  const collectors::FilesystemUsage& u = *f.usage;
  const uint64_t used = u.size_bytes - std::min(u.free_bytes, u.size_bytes);
  if (used + u.avail_bytes > 0) {
    // df rounds up: a byte over a whole percent shows the next one.
    h.used_percent = std::ceil(Percent(used, used + u.avail_bytes));
  }
  if (u.size_bytes > 0) h.avail_percent = Percent(u.avail_bytes, u.size_bytes);
  if (u.files > 0) {
    h.inodes_used_percent = std::ceil(Percent(u.files - std::min(u.files_free, u.files), u.files));
    h.inodes_free_percent = Percent(u.files_free, u.files);
  }
  return h;
}

void FilesystemProblems(const FilesystemHealth& f, std::vector<std::string>& problems) {
  const std::string& at = f.mount_point;
  if (f.unreadable) problems.push_back(at + ": unreadable (statvfs failed or did not answer)");
  if (f.errors > 0) {
    problems.push_back(fmt::format("{}: {} recorded {} error(s)", at, f.fstype, f.errors));
  }
  if (f.readonly) return;  // the floors are for filesystems written to, as the alerts'
  if (f.avail_percent && *f.avail_percent < kFloorPercent) {
    problems.push_back(fmt::format("{}: {:.1f} % space left", at, *f.avail_percent));
  }
  if (f.inodes_free_percent && *f.inodes_free_percent < kFloorPercent) {
    problems.push_back(fmt::format("{}: {:.1f} % inodes left", at, *f.inodes_free_percent));
  }
}

void AtaFacts(const SmartReport& r, SmartHealth& h, std::vector<std::string>& problems) {
  for (const AtaFact& fact : kAtaFacts) {
    const auto it = std::ranges::find(r.attributes, fact.id, &collectors::SmartAttribute::id);
    if (it == r.attributes.end()) continue;
    h.facts.emplace_back(fact.label, fmt::format("{}", it->raw));
    if (fact.problem && it->raw > 0) {
      problems.push_back(fmt::format("{} {} (attribute {})", it->raw, fact.label, fact.id));
    }
  }
  if (r.exit_status & collectors::kSmartctlPrefailBelow) {
    problems.emplace_back("a pre-failure attribute is at or below its threshold");
  }
}

// Each fact only where smartctl gave it in range.
void NvmeFacts(const collectors::NvmeHealth& n, SmartHealth& h,
               std::vector<std::string>& problems) {
  const bool spare = n.available_spare && n.available_spare_threshold;
  if (n.critical_warning) {
    h.facts.emplace_back("critical warning", fmt::format("{:#04x}", *n.critical_warning));
  }
  if (n.percentage_used) {
    h.facts.emplace_back("percentage used", fmt::format("{} %", *n.percentage_used));
  }
  if (spare) {
    h.facts.emplace_back("available spare", fmt::format("{} % (threshold {} %)", *n.available_spare,
                                                        *n.available_spare_threshold));
  }
  if (n.media_errors) h.facts.emplace_back("media errors", fmt::format("{}", *n.media_errors));
  if (n.unsafe_shutdowns) {
    h.facts.emplace_back("unsafe shutdowns", fmt::format("{}", *n.unsafe_shutdowns));
  }
  if (n.critical_warning.value_or(0) != 0) {
    problems.push_back(fmt::format("NVMe critical warning {:#04x}", *n.critical_warning));
  }
  if (spare && *n.available_spare < *n.available_spare_threshold) {
    problems.push_back(fmt::format("available spare {} % is below its threshold, {} %",
                                   *n.available_spare, *n.available_spare_threshold));
  }
  if (n.percentage_used.value_or(0) > kWearPercent) {
    problems.push_back(fmt::format("{} % of its rated endurance used", *n.percentage_used));
  }
}

void ScsiFacts(const collectors::ScsiErrors& s, SmartHealth& h) {
  const std::pair<const char*, const std::optional<uint64_t>*> facts[] = {
      {"grown defects", &s.grown_defects},
      {"uncorrected read errors", &s.uncorrected_read},
      {"uncorrected write errors", &s.uncorrected_write}};
  for (const auto& [label, value] : facts) {
    if (*value) h.facts.emplace_back(label, fmt::format("{}", **value));
  }
}

SmartHealth SmartOf(const SmartReport& r, std::vector<std::string>& problems) {
  SmartHealth h;
  h.state = r.passed ? (*r.passed ? "passed" : "failed") : "health log";
  if (r.passed && !*r.passed) problems.emplace_back("SMART overall-health self-assessment: FAILED");
  h.detail = r.protocol;
  if (r.temperature_celsius) {
    h.facts.emplace_back("temperature",
                         r.temperature_limit_celsius
                             ? fmt::format("{} °C (limit {} °C)", *r.temperature_celsius,
                                           *r.temperature_limit_celsius)
                             : fmt::format("{} °C", *r.temperature_celsius));
    if (r.temperature_limit_celsius && *r.temperature_celsius >= *r.temperature_limit_celsius) {
      problems.push_back(fmt::format("at its temperature limit ({} °C)", *r.temperature_celsius));
    }
  }
  if (r.power_on_hours) h.facts.emplace_back("power on", fmt::format("{} h", *r.power_on_hours));
  AtaFacts(r, h, problems);
  if (r.nvme) NvmeFacts(*r.nvme, h, problems);
  // A figure smartctl gave out of range is left out: say so, not "no problems".
  for (const std::string& w : r.warnings) problems.push_back("smartctl's output rejected: " + w);
  ScsiFacts(r.scsi, h);
  return h;
}

SmartHealth SmartOf(const collectors::BlockDevice& d, const Snapshot& s, bool smart_ran,
                    std::vector<std::string>& problems) {
  if (!MayHaveSmart(d)) return {"none", "no SMART of its own (" + d.transport + ")", {}};
  if (!smart_ran) return {"not run", "--no-smart", {}};
  const auto it = std::ranges::find(s.smart.devices, d.name, &SmartSeries::device);
  if (it == s.smart.devices.end()) return {"not run", "smartctl did not finish in time", {}};
  if (it->report && it->report->HasHealth()) return SmartOf(*it->report, problems);
  return {"unavailable", it->error, {}};
}

// The whole disk of the first device `matches` picks (a partition's disk); none when no
// device matches.
template <typename Match>
std::optional<std::string> WholeDiskOf(const std::vector<collectors::BlockDevice>& devices,
                                       Match matches) {
  const auto it = std::ranges::find_if(devices, matches);
  if (it == devices.end()) return std::nullopt;
  return it->is_partition ? it->parent : it->name;
}

// The whole disk of a name the kernel printed (itself when no longer listed).
std::string WholeDiskNamed(const std::string& name,
                           const std::vector<collectors::BlockDevice>& devices) {
  return WholeDiskOf(devices, [&](const collectors::BlockDevice& d) { return d.name == name; })
      .value_or(name);
}

// The whole disk of a device number as the store writes it ("8:1" -> "sda").
std::string WholeDiskNumbered(const std::string& number,
                              const std::vector<collectors::BlockDevice>& devices) {
  return WholeDiskOf(devices,
                     [&](const collectors::BlockDevice& d) {
                       return fmt::format("{}:{}", d.major, d.minor) == number;
                     })
      .value_or("");
}

DiskHealth HealthOf(const collectors::BlockDevice& d, const Snapshot& s,
                    std::span<const ProbeSeriesVerdict> probes,
                    std::span<const PassiveSeriesVerdict> passive, bool smart_ran) {
  DiskHealth disk{d.name, d.model, d.serial, d.transport, d.size_bytes, {}, {}, {},
                  {},     {},      {},       {},          {},           {}, {}};
  disk.smart = SmartOf(d, s, smart_ran, disk.problems);
  for (const IoErrorSeries& e : s.kmsg.errors) {
    if (WholeDiskNamed(e.device, *s.block_devices) != d.name) continue;
    disk.io_errors.push_back(e);
    // A request the device does not do (mkfs's WRITE_ZEROES on a device that
    // refuses it) is listed, not a problem: IowatchDiskIoErrors's judgement.
    if (!e.buffer && IsDeviceFailure(e.error, e.op)) {
      disk.problems.push_back(
          fmt::format("{} {} error(s) on {} requests in the kernel log", e.count, e.error, e.op));
    }
  }
  for (const FilesystemShutdownSeries& e : s.kmsg.shutdowns) {
    if (WholeDiskNamed(e.device, *s.block_devices) != d.name) continue;
    disk.problems.push_back(fmt::format("{} on {} shut down {} time(s) since boot (kernel log)",
                                        e.fstype, e.device, e.count));
  }
  for (const ScsiSenseSeries& e : s.kmsg.senses) {
    // The two keys by which the device says it failed itself; the others
    // (Unit Attention after a reset, Not Ready while spinning up, Recovered
    // Error) are reported by the metric, not judged here.
    if (e.sense_key != "Medium Error" && e.sense_key != "Hardware Error") continue;
    if (WholeDiskNamed(e.device, *s.block_devices) != d.name) continue;
    disk.problems.push_back(
        fmt::format("{} SCSI command(s) ended with {} (kernel log)", e.count, e.sense_key));
  }
  for (const FilesystemSeries& f : s.filesystems.series) {
    if (f.disk != d.name) continue;
    disk.filesystems.push_back(FilesystemOf(f));
    FilesystemProblems(disk.filesystems.back(), disk.problems);
  }
  for (const ProbeSeriesVerdict& p : probes) {
    if (WholeDiskNumbered(p.device, *s.block_devices) != d.name) continue;
    disk.probes.push_back(p);
    if (p.regressed) disk.problems.push_back("probe " + p.job + ": regressed");
  }
  for (const PassiveSeriesVerdict& v : passive) {
    if (v.device != d.name) continue;
    disk.passive.push_back(v);
    if (v.regressed) disk.problems.push_back("passive judge: " + DescribePassive(v));
  }
  return disk;
}

// Each md array onto its device's story; an array whose device was not
// sampled (filtered out, or no block device yet) gets a story of its own.
void AddMdArrays(const Snapshot& s, std::string_view only_device, HostHealth& health) {
  for (MdArrayHealth& array : BuildMdHealth(s)) {
    if (!only_device.empty() && array.name != only_device) continue;
    auto disk = std::ranges::find(health.disks, array.name, &DiskHealth::name);
    if (disk == health.disks.end()) {
      DiskHealth own;
      own.name = array.name;
      own.transport = "md";
      own.size_bytes = array.size_bytes;
      own.smart = {"none", "no SMART of its own (md)", {}};
      disk = health.disks.insert(health.disks.end(), std::move(own));
    }
    disk->problems.insert(disk->problems.end(), array.problems.begin(), array.problems.end());
    disk->md = std::move(array);
  }
}

// Each thin pool onto its dm device's story (its own when that device was
// not sampled); `only_device` matches its device or its pool name.
void AddThinPools(const Snapshot& s, std::string_view only_device, HostHealth& health) {
  for (ThinPoolHealth& pool : BuildThinPoolHealth(s)) {
    const std::string name = pool.device.empty() ? pool.pool : pool.device;
    if (!only_device.empty() && name != only_device && pool.pool != only_device) continue;
    auto disk = std::ranges::find(health.disks, name, &DiskHealth::name);
    if (disk == health.disks.end()) {
      DiskHealth own;
      own.name = name;
      own.transport = "dm";
      own.size_bytes = pool.data_bytes.value_or(0);
      own.smart = {"none", "no SMART of its own (dm)", {}};
      disk = health.disks.insert(health.disks.end(), std::move(own));
    }
    disk->problems.insert(disk->problems.end(), pool.problems.begin(), pool.problems.end());
    disk->thin_pool = std::move(pool);
  }
}

// The story named `name`, appended when there is none (a device not
// sampled, or not a block device): a `transport` without SMART of its own.
DiskHealth& StoryOf(HostHealth& health, const std::string& name, const std::string& transport) {
  auto disk = std::ranges::find(health.disks, name, &DiskHealth::name);
  if (disk != health.disks.end()) return *disk;
  DiskHealth own;
  own.name = name;
  own.transport = transport;
  own.smart = {"none", "no SMART of its own (" + transport + ")", {}};
  return health.disks.emplace_back(std::move(own));
}

void AddProblems(DiskHealth& disk, const std::vector<std::string>& problems) {
  disk.problems.insert(disk.problems.end(), problems.begin(), problems.end());
}

// Each NVMe controller onto its namespaces' disks; a controller none of
// whose namespaces was sampled (dead, or filtered out) gets a story of its own.
void AddNvmeControllers(const Snapshot& s, std::string_view only_device, HostHealth& health) {
  for (NvmeControllerHealth& c : BuildNvmeHealth(s)) {
    bool told = false;
    for (const std::string& ns : c.namespaces) {
      auto disk = std::ranges::find(health.disks, ns, &DiskHealth::name);
      if (disk == health.disks.end()) continue;
      AddProblems(*disk, c.problems);
      disk->nvme = c;
      told = true;
    }
    if (told || (!only_device.empty() && c.name != only_device)) continue;
    DiskHealth& own = StoryOf(health, c.name, "nvme");
    own.model = c.model;
    own.serial = c.serial;
    AddProblems(own, c.problems);
    own.nvme = std::move(c);
  }
}

// Each multipath map onto its dm device's story (its own when not sampled).
void AddMultipathMaps(const Snapshot& s, std::string_view only_device, HostHealth& health) {
  for (MultipathHealth& m : BuildMultipathHealth(s)) {
    if (!only_device.empty() && m.device != only_device) continue;
    DiskHealth& disk = StoryOf(health, m.device, "dm");
    AddProblems(disk, m.problems);
    disk.multipath = std::move(m);
  }
}

void AddZfsPools(const Snapshot& s, std::string_view only_device, HostHealth& health) {
  for (ZfsPoolHealth& p : BuildZfsHealth(s)) {
    if (only_device.empty() || p.name == only_device) health.zfs_pools.push_back(std::move(p));
  }
}

void Notes(const Snapshot& s, HostHealth& health) {
  static const std::set<std::string_view> kNoted = {"kmsg", "filesystem", "thin_pool",
                                                    "nvme", "zfs_pool",   "multipath"};
  for (const CollectorStatus& c : s.collectors) {
    if (!kNoted.contains(c.name)) continue;
    if (!c.success && !c.error.empty()) health.notes.push_back(c.name + ": " + c.error);
  }
}

}  // namespace

bool MayHaveSmart(const collectors::BlockDevice& d) {
  static const std::set<std::string_view> kVirtual = {"dm", "md", "loop", "zram", "ram", "nbd"};
  return !d.is_partition && !kVirtual.contains(d.transport);
}

const DiskHealth* FindDisk(const HostHealth& health, std::string_view name) {
  const auto it = std::ranges::find(health.disks, name, &DiskHealth::name);
  return it == health.disks.end() ? nullptr : &*it;
}

size_t HostHealth::Problems() const {
  size_t n = 0;
  for (const DiskHealth& d : disks) n += d.problems.size();
  for (const ZfsPoolHealth& p : zfs_pools) n += p.problems.size();
  return n;
}

std::string DescribePassive(const PassiveSeriesVerdict& v) {
  std::string out = fmt::format("{} {} ({})", v.op, v.size,
                                v.source == "device" ? "device stage" : "await, queue included");
  if (!v.regressed) return out + ": no regression";
  if (v.drift_ratio > 0) {
    out += fmt::format(": {:.2f}× its first day (a slow drift)", v.drift_ratio);
  } else {
    out += v.ratio > 0 ? fmt::format(": {:.2f}× its past", v.ratio) : ": slower than its past";
  }
  if (v.since_unix_ms > 0) {
    const std::time_t since = static_cast<std::time_t>(v.since_unix_ms / 1000);
    out += fmt::format(" since {:%Y-%m-%d %H:%M} UTC", fmt::gmtime(since));
  }
  return out;
}

HostHealth BuildHostHealth(const Snapshot& s, std::span<const ProbeSeriesVerdict> probes,
                           std::span<const PassiveSeriesVerdict> passive,
                           std::string_view only_device, bool smart_ran) {
  HostHealth health;
  for (const collectors::BlockDevice& d : *s.block_devices) {
    if (d.is_partition || (!only_device.empty() && d.name != only_device)) continue;
    health.disks.push_back(HealthOf(d, s, probes, passive, smart_ran));
  }
  AddMdArrays(s, only_device, health);
  AddThinPools(s, only_device, health);
  AddNvmeControllers(s, only_device, health);
  AddMultipathMaps(s, only_device, health);
  AddZfsPools(s, only_device, health);
  Notes(s, health);
  return health;
}

}  // namespace iowatch::daemon
