// The smart families as /metrics writes them, for an NVMe disk with every
// health-log field, an ATA disk with a failed verdict and a disk smartctl
// could not read: every row's name, TYPE, HELP and value (scaled) together,
// so a row whose text and value came apart would show here. The metrics
// golden has no smart disk.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "daemon/metrics/metrics_renderer.h"

namespace iowatch::daemon {
namespace {

std::string SmartLines(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.find("iowatch_smart_") != std::string::npos) out += line + "\n";
  }
  return out;
}

Snapshot WithSmartDisks() {
  collectors::SmartReport nvme;
  nvme.protocol = "NVMe";
  nvme.model = "Samsung SSD 980";
  nvme.serial = "S64";
  nvme.firmware = "3B4QFXO7";
  nvme.passed = true;
  nvme.temperature_celsius = 41;
  nvme.temperature_limit_celsius = 82;
  nvme.power_on_hours = 1234;
  nvme.power_cycles = 56;
  nvme.nvme = collectors::NvmeHealth{.critical_warning = 0,
                                     .available_spare = 100,
                                     .available_spare_threshold = 10,
                                     .percentage_used = 3,
                                     .data_units_read = 1000,
                                     .data_units_written = 2000,
                                     .media_errors = 0,
                                     .error_log_entries = 7,
                                     .unsafe_shutdowns = 9};
  collectors::SmartReport ata;
  ata.protocol = "ATA";
  ata.model = "WDC WD40";
  ata.exit_status = 8;
  ata.passed = false;
  ata.temperature_celsius = -5;
  ata.power_cycles = 3;
  Snapshot s;
  s.smart.devices = {{"nvme0n1", nvme, ""}, {"sda", ata, ""}, {"sdb", std::nullopt, "asleep"}};
  return s;
}

TEST(SmartMetrics, EveryRowWritesItsOwnValueUnderItsOwnText) {
  const std::string expected =
      R"(# HELP iowatch_smart_available_spare_ratio NVMe available spare (0..1).
# TYPE iowatch_smart_available_spare_ratio gauge
iowatch_smart_available_spare_ratio{device="nvme0n1"} 1
# HELP iowatch_smart_available_spare_threshold_ratio NVMe available spare threshold (0..1): below it the device warns.
# TYPE iowatch_smart_available_spare_threshold_ratio gauge
iowatch_smart_available_spare_threshold_ratio{device="nvme0n1"} 0.1
# HELP iowatch_smart_device_info A disk smartctl identified (always 1): protocol ATA, NVMe or SCSI, model, serial, firmware.
# TYPE iowatch_smart_device_info gauge
iowatch_smart_device_info{device="nvme0n1",firmware_version="3B4QFXO7",model_name="Samsung SSD 980",protocol="NVMe",serial_number="S64"} 1
iowatch_smart_device_info{device="sda",firmware_version="",model_name="WDC WD40",protocol="ATA",serial_number=""} 1
# HELP iowatch_smart_error_log_entries_total NVMe error information log entries.
# TYPE iowatch_smart_error_log_entries_total counter
iowatch_smart_error_log_entries_total{device="nvme0n1"} 7
# HELP iowatch_smart_exit_status smartctl's exit status bits at the last read (smartctl(8)): 8 failing, 16 prefail attribute at threshold, 32 past threshold before, 64 error log, 128 self-test errors.
# TYPE iowatch_smart_exit_status gauge
iowatch_smart_exit_status{device="nvme0n1"} 0
iowatch_smart_exit_status{device="sda"} 8
# HELP iowatch_smart_media_errors_total NVMe media and data integrity errors (unrecovered) since manufacture.
# TYPE iowatch_smart_media_errors_total counter
iowatch_smart_media_errors_total{device="nvme0n1"} 0
# HELP iowatch_smart_nvme_critical_warning NVMe critical warning bits: 0x1 spare below threshold, 0x2 temperature, 0x4 reliability degraded, 0x8 read-only, 0x10 volatile backup failed; 0 when none.
# TYPE iowatch_smart_nvme_critical_warning gauge
iowatch_smart_nvme_critical_warning{device="nvme0n1"} 0
# HELP iowatch_smart_percentage_used_ratio NVMe's estimate of its life used (0..1; may exceed 1).
# TYPE iowatch_smart_percentage_used_ratio gauge
iowatch_smart_percentage_used_ratio{device="nvme0n1"} 0.03
# HELP iowatch_smart_power_cycles_total Power cycles.
# TYPE iowatch_smart_power_cycles_total counter
iowatch_smart_power_cycles_total{device="nvme0n1"} 56
iowatch_smart_power_cycles_total{device="sda"} 3
# HELP iowatch_smart_power_on_seconds Power-on time (hours x 3600).
# TYPE iowatch_smart_power_on_seconds counter
iowatch_smart_power_on_seconds{device="nvme0n1"} 4442400
# HELP iowatch_smart_read_bytes_total Bytes the NVMe device reports read (data units of 512,000 bytes).
# TYPE iowatch_smart_read_bytes_total counter
iowatch_smart_read_bytes_total{device="nvme0n1"} 512000000
# HELP iowatch_smart_status_passed 1 when the device's overall SMART self-assessment passes, 0 when it says FAILING.
# TYPE iowatch_smart_status_passed gauge
iowatch_smart_status_passed{device="nvme0n1"} 1
iowatch_smart_status_passed{device="sda"} 0
# HELP iowatch_smart_temperature_celsius Current temperature, °C.
# TYPE iowatch_smart_temperature_celsius gauge
iowatch_smart_temperature_celsius{device="nvme0n1"} 41
iowatch_smart_temperature_celsius{device="sda"} -5
# HELP iowatch_smart_temperature_limit_celsius The device's own temperature limit, °C: NVMe's warning threshold, ATA SCT's operating maximum, SCSI's trip point.
# TYPE iowatch_smart_temperature_limit_celsius gauge
iowatch_smart_temperature_limit_celsius{device="nvme0n1"} 82
# HELP iowatch_smart_unsafe_shutdowns_total NVMe unsafe shutdowns.
# TYPE iowatch_smart_unsafe_shutdowns_total counter
iowatch_smart_unsafe_shutdowns_total{device="nvme0n1"} 9
# HELP iowatch_smart_up 1 when smartctl gave the disk's health at its last read, else 0 (the collector's log says why: no SMART here, no privilege, asleep before any read).
# TYPE iowatch_smart_up gauge
iowatch_smart_up{device="nvme0n1"} 1
iowatch_smart_up{device="sda"} 1
iowatch_smart_up{device="sdb"} 0
# HELP iowatch_smart_written_bytes_total Bytes the NVMe device reports written (data units of 512,000 bytes).
# TYPE iowatch_smart_written_bytes_total counter
iowatch_smart_written_bytes_total{device="nvme0n1"} 1024000000
)";
  EXPECT_EQ(SmartLines(RenderSnapshot(WithSmartDisks())), expected);
}

}  // namespace
}  // namespace iowatch::daemon
