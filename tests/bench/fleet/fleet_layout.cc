#include "tests/bench/fleet/fleet_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace iowatch::fleet {
namespace {

// Five models of data-centre SSD, named for this simulation only. Their QD1
// latencies differ so that a disk can only be judged against its own model;
// B and D run two firmware revisions side by side (a fleet mid-way through
// an earlier update), which splits their peers.
std::vector<ModelSpec> Models() {
  return {
      {"NV-A3840", "vendorA", "nvme", 3'840'755'982'336, 80, {"A100"}, 1},
      {"NV-B1920", "vendorB", "nvme", 1'920'383'410'176, 95, {"B210", "B220"}, 0.4},
      {"SA-C960", "vendorC", "sata", 960'197'124'096, 140, {"C3"}, 1},
      {"SA-D1920", "vendorD", "sata", 1'920'383'410'176, 160, {"D07", "D08"}, 0.5},
      {"SS-E1600", "vendorE", "sas", 1'600'321'314'816, 120, {"E1"}, 1},
  };
}

// A host's share of diurnal_disk.h's day (its afternoon peak of 3,000
// foreign requests/s and 25 % steal, this VM's): busyness u uniform in
// [0, 1] scales others' load by 100^-u (3,000 to 30 requests/s at the peak,
// the night a hundredth of it) and the peak steal by 1 - u. A fleet holds
// idle hosts and busy ones; the busiest are as this VM under load. The
// fleet's load and steal shapes move the peaks (a night batch, bursts of
// steal) at the same levels.
probes::test_data::DiurnalShape HostShape(std::mt19937_64& rng, const FleetSpec& spec) {
  const double u = std::uniform_real_distribution<double>(0, 1)(rng);
  probes::test_data::DiurnalShape shape;
  shape.load = spec.load;
  shape.steal = spec.steal;
  const double scale = std::pow(100.0, -u);
  shape.peak_load *= scale;
  shape.night_load *= scale;
  shape.peak_steal = std::max(shape.night_steal, shape.peak_steal * (1 - u));
  // The run-to-run noise is drawn from this machine's recordings instead
  // (recorded_spread.h); lognormal_distribution needs σ > 0.
  shape.run_noise = 1e-9;
  return shape;
}

// A host's seed for what only some shapes draw (its bursts of steal): from
// the fleet's seed and the host, not from the fleet's stream, so that the
// disks and faults of a seed stay the same under every shape.
uint64_t HostSeed(uint64_t fleet_seed, int host) {
  std::seed_seq seq{static_cast<uint32_t>(fleet_seed), static_cast<uint32_t>(fleet_seed >> 32),
                    static_cast<uint32_t>(host), 0x57ea1u};
  std::mt19937_64 rng(seq);
  return rng();
}

int64_t UniformMs(std::mt19937_64& rng, int64_t from_ms, int64_t to_ms) {
  return std::uniform_int_distribution<int64_t>(from_ms, std::max(from_ms, to_ms))(rng);
}

double Uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, std::max(lo, hi))(rng);
}

// Faults on disks of every model but the one the firmware update slows, so
// that each disk has one cause. Gradual ones start in the first half (they
// need days to matter), abrupt ones anywhere but the first and last two days.
void InjectFaults(Fleet& fleet, std::mt19937_64& rng) {
  const FleetSpec& s = fleet.spec;
  std::vector<size_t> candidates;
  for (size_t i = 0; i < fleet.disks.size(); ++i) {
    if (fleet.disks[i].model != fleet.firmware_model) candidates.push_back(i);
  }
  std::ranges::shuffle(candidates, rng);
  const int64_t end_ms = s.end_ms;
  for (size_t n = 0; n < candidates.size() && n < static_cast<size_t>(s.gradual + s.abrupt); ++n) {
    Fault& f = fleet.disks[candidates[n]].fault;
    if (n < static_cast<size_t>(s.gradual)) {
      f.kind = FaultKind::kGradual;
      f.start_ms =
          UniformMs(rng, fleet.start_ms + 2 * kDayMs, fleet.start_ms + s.days * kDayMs / 2);
      f.loss_per_day = Uniform(rng, s.gradual_min, s.gradual_max);
    } else {
      f.kind = FaultKind::kAbrupt;
      f.start_ms = UniformMs(rng, fleet.start_ms + 2 * kDayMs, end_ms - 2 * kDayMs);
      f.iops_factor = 1 - Uniform(rng, s.abrupt_min, s.abrupt_max);
    }
  }
}

// The firmware model's hosts each updated at a random time in the rollout
// (all its disks at once, the host down for reboot_ms), starting a little
// after the middle of the span so that the model has a week behind it.
void RollOut(Fleet& fleet, std::mt19937_64& rng) {
  const FleetSpec& s = fleet.spec;
  fleet.rollout_start_ms = fleet.start_ms + s.days * kDayMs * 55 / 100 +
                           UniformMs(rng, 0, kDayMs - 1) / kMinuteMs * kMinuteMs;
  std::vector<int64_t> host_update(static_cast<size_t>(s.hosts), 0);
  for (int64_t& at : host_update)
    at = UniformMs(rng, fleet.rollout_start_ms, fleet.rollout_start_ms + s.rollout_ms);
  for (DiskSpec& d : fleet.disks) {
    if (d.model != fleet.firmware_model) continue;
    d.fault.kind = FaultKind::kFirmware;
    d.fault.start_ms = host_update[static_cast<size_t>(d.host)];
    d.fault.iops_factor = 1 - s.firmware_loss;
    d.down_ms = s.reboot_ms;
  }
}

}  // namespace

const char* ToString(FaultKind kind) {
  switch (kind) {
    case FaultKind::kNone:
      return "none";
    case FaultKind::kGradual:
      return "gradual";
    case FaultKind::kAbrupt:
      return "abrupt";
    case FaultKind::kFirmware:
      return "firmware";
  }
  return "none";
}

Fleet MakeFleet(const FleetSpec& spec) {
  Fleet fleet;
  fleet.spec = spec;
  fleet.start_ms = spec.end_ms - spec.days * kDayMs;
  fleet.models = Models();
  fleet.firmware_model = 2;
  fleet.new_firmware = "C4";
  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<double> spread(0, spec.disk_spread);
  std::uniform_real_distribution<double> unit(0, 1);
  const int models = static_cast<int>(fleet.models.size());
  for (int h = 0; h < spec.hosts; ++h) {
    fleet.hosts.push_back(HostShape(rng, spec));
    probes::test_data::DiurnalShape& host = fleet.hosts.back();
    if (host.steal == probes::test_data::StealShape::kBursts) {
      host.steal_bursts = probes::test_data::DrawStealBursts(HostSeed(spec.seed, h), fleet.start_ms,
                                                             spec.end_ms, host);
    }
    const int model = h % models;  // a host holds one model, as bought
    for (int slot = 0; slot < kDisksPerHost; ++slot) {
      DiskSpec d;
      d.host = h;
      d.slot = slot;
      d.model = model;
      d.firmware = unit(rng) < fleet.models[static_cast<size_t>(model)].first_share ? 0 : 1;
      d.speed = std::exp(spread(rng));
      d.seed = rng();
      fleet.disks.push_back(d);
    }
  }
  RollOut(fleet, rng);
  InjectFaults(fleet, rng);
  return fleet;
}

std::string InstanceOf(int host) { return fmt::format("host{:04d}:9860", host); }
std::string DeviceOf(int slot) { return fmt::format("sd{}", static_cast<char>('a' + slot)); }
std::string ProbeOf(int slot) { return "randread-4k-qd1-" + DeviceOf(slot); }

const std::string& FirmwareOf(const Fleet& fleet, const DiskSpec& disk, int64_t at_ms) {
  if (disk.fault.kind == FaultKind::kFirmware && at_ms >= disk.fault.start_ms) {
    return fleet.new_firmware;
  }
  return fleet.models[static_cast<size_t>(disk.model)]
      .firmwares[static_cast<size_t>(disk.firmware)];
}

bool DownAt(const DiskSpec& disk, int64_t at_ms) {
  return at_ms >= disk.fault.start_ms && at_ms < disk.fault.start_ms + disk.down_ms;
}

double SpeedAt(const DiskSpec& disk, int64_t at_ms) {
  const Fault& f = disk.fault;
  if (f.kind == FaultKind::kNone || at_ms < f.start_ms) return disk.speed;
  if (f.kind == FaultKind::kGradual) {
    const double days = static_cast<double>(at_ms - f.start_ms) / static_cast<double>(kDayMs);
    return disk.speed * std::max(0.2, 1 - f.loss_per_day * days);  // a disk at 80 % loss is dead
  }
  return disk.speed * f.iops_factor;
}

}  // namespace iowatch::fleet
