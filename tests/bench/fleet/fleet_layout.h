// FleetLayout: the synthetic fleet of the fleet simulation, drawn
// from one seed so that the series and the ground truth agree: hosts of five
// disk models (some with two firmware revisions), each disk a little faster
// or slower than its model (the spread between disks of one batch), each host
// a share of diurnal_disk.h's load and steal (of the fleet's shapes: an
// afternoon or night-time load; steal with the day, in bursts, or none), and
// the injected faults: gradual degradations, abrupt failures and one model's
// firmware update. The shapes change no other draw: a seed's disks, faults
// and run noise are the same whatever the load and steal.
// Thread-safety: a plain value once made.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/bench/verdicts/diurnal_disk.h"

namespace iowatch::fleet {

inline constexpr int64_t kMinuteMs = 60'000;
inline constexpr int64_t kHourMs = 60 * kMinuteMs;
inline constexpr int64_t kDayMs = 24 * kHourMs;
inline constexpr int64_t kIntervalMs = 15 * kMinuteMs;  // the bundled schedule's every
inline constexpr int kDisksPerHost = 4;

struct ModelSpec {
  std::string name;
  std::string vendor;
  std::string transport;
  uint64_t size_bytes = 0;
  double latency_us = 100;  // the healthy disk's quiet QD1 4 KiB read
  // Revisions in the fleet and the share of disks on the first; a disk takes
  // the first with that probability, else the second.
  std::vector<std::string> firmwares;
  double first_share = 1;
};

enum class FaultKind { kNone, kGradual, kAbrupt, kFirmware };
const char* ToString(FaultKind kind);

struct Fault {
  FaultKind kind = FaultKind::kNone;
  int64_t start_ms = 0;
  double loss_per_day = 0;  // gradual: IOPS lost per day since the start
  double iops_factor = 1;   // abrupt and firmware: IOPS × this from the start
};

struct DiskSpec {
  int host = 0;
  int slot = 0;  // sda, sdb, ...
  int model = 0;
  int firmware = 0;     // index into the model's firmwares
  double speed = 1;     // IOPS × this against the model (the batch spread)
  uint64_t seed = 0;    // the disk's own draws
  Fault fault;          // kFirmware: the host's update (start_ms), new revision
  int64_t down_ms = 0;  // the host's reboot for the update: no runs, no scrapes
};

struct FleetSpec {
  int hosts = 1000;
  int days = 30;
  uint64_t seed = 28;
  int64_t end_ms = 0;  // the last scrape; a multiple of kIntervalMs
  int gradual = 20;
  int abrupt = 5;
  double gradual_min = 0.02;  // IOPS lost per day, drawn uniformly between
  double gradual_max = 0.05;
  double abrupt_min = 0.40;  // IOPS lost at once, drawn uniformly between
  double abrupt_max = 0.60;
  double firmware_loss = 0.30;
  int64_t rollout_ms = 36 * kHourMs;  // hosts updated at random times over this
  int64_t reboot_ms = kHourMs;        // each host down this long for its update
  double disk_spread = 0.03;          // σ of the disks' log speed around their model's
  probes::test_data::LoadShape load = probes::test_data::LoadShape::kAfternoon;
  probes::test_data::StealShape steal = probes::test_data::StealShape::kDiurnal;
  // The passive judge's window on each disk's own reads (passive_timeline.h);
  // 0: no passive series.
  int64_t passive_window_ms = kMinuteMs;
};

struct Fleet {
  FleetSpec spec;
  int64_t start_ms = 0;
  std::vector<ModelSpec> models;
  int firmware_model = 0;  // the model whose update slows it
  std::string new_firmware;
  int64_t rollout_start_ms = 0;
  std::vector<probes::test_data::DiurnalShape> hosts;  // each host's load and steal
  std::vector<DiskSpec> disks;
};

Fleet MakeFleet(const FleetSpec& spec);

// Labels as the daemon and a scrape give them.
std::string InstanceOf(int host);  // "host0042:9860"
std::string DeviceOf(int slot);    // "sda"
std::string ProbeOf(int slot);     // "randread-4k-qd1-sda"
const std::string& FirmwareOf(const Fleet& fleet, const DiskSpec& disk, int64_t at_ms);

// Whether the disk's host is down for its firmware update at `at_ms`.
bool DownAt(const DiskSpec& disk, int64_t at_ms);

// The disk's IOPS relative to its model's at `at_ms`: its own speed, its
// fault, and its firmware.
double SpeedAt(const DiskSpec& disk, int64_t at_ms);

}  // namespace iowatch::fleet
