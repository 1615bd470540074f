// What smartctl (smartmontools 6.7-7.4) says of a device's health, from its
// JSON output (`smartctl --json=c -x -n standby DEV`, json_format_version 1.0):
// the overall verdict (smart_status.passed), temperature with the device's
// own limit (ATA SCT's op_limit_max, NVMe's composite warning threshold,
// SCSI's drive_trip), power-on time and cycles, and per protocol: ATA's
// attribute table, NVMe's health log, SCSI's grown defects and uncorrected
// errors. smartctl's exit status is a bit mask (smartctl(8), "RETURN
// VALUES"): it is decoded, never read as "no data". A number outside its
// field's range is left out and named in the report's warnings.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch::collectors {

// smartctl(8)'s exit status bits.
enum SmartctlExit : uint32_t {
  kSmartctlCommandLine = 1 << 0,     // the command line did not parse, or no device type fits
  kSmartctlOpenFailed = 1 << 1,      // the device did not open, or is in standby (-n standby)
  kSmartctlCommandFailed = 1 << 2,   // a SMART or other ATA command failed, or checksum error
  kSmartctlDiskFailing = 1 << 3,     // SMART status: DISK FAILING
  kSmartctlPrefailBelow = 1 << 4,    // a prefail attribute is at or below its threshold
  kSmartctlUsageWasBelow = 1 << 5,   // an attribute was at or below its threshold in the past
  kSmartctlErrorLog = 1 << 6,        // the device error log has errors
  kSmartctlSelfTestErrors = 1 << 7,  // the self-test log has errors
};

struct SmartAttribute {
  uint32_t id = 0;
  std::string name;
  int64_t value = 0;  // normalized, 1..253
  int64_t worst = 0;
  int64_t thresh = 0;  // at or below it the attribute has failed
  uint64_t raw = 0;    // raw.value (vendor-specific units)
  bool prefailure = false;
  bool operator==(const SmartAttribute&) const = default;
};

// Each field none when smartctl's value was out of its range (a warning).
struct NvmeHealth {
  std::optional<uint64_t>
      critical_warning;  // bits: spare, temperature, reliability, read-only, backup
  std::optional<uint64_t> available_spare;  // percent
  std::optional<uint64_t> available_spare_threshold;
  std::optional<uint64_t> percentage_used;  // may exceed 100
  std::optional<uint64_t> data_units_read;  // of 512,000 bytes
  std::optional<uint64_t> data_units_written;
  std::optional<uint64_t> media_errors;
  std::optional<uint64_t> error_log_entries;
  std::optional<uint64_t> unsafe_shutdowns;
  bool operator==(const NvmeHealth&) const = default;
};

struct ScsiErrors {
  std::optional<uint64_t> grown_defects;
  std::optional<uint64_t> uncorrected_read;
  std::optional<uint64_t> uncorrected_write;
  std::optional<uint64_t> uncorrected_verify;
  bool operator==(const ScsiErrors&) const = default;
};

struct SmartReport {
  uint32_t exit_status = 0;  // smartctl.exit_status: SmartctlExit bits
  std::string protocol;      // device.protocol: "ATA", "NVMe", "SCSI"; "" when not detected
  // model_name (SCSI: scsi_model_name, or vendor and product); firmware_version
  // (SCSI: its revision).
  std::string model, serial, firmware;
  std::optional<bool> passed;  // smart_status.passed; none when SMART was not read
  std::optional<int64_t> temperature_celsius;
  std::optional<int64_t> temperature_limit_celsius;  // the device's own
  std::optional<uint64_t> power_on_hours;
  std::optional<uint64_t> power_cycles;
  std::vector<SmartAttribute> attributes;  // ATA, in table order
  std::optional<NvmeHealth> nvme;
  ScsiErrors scsi;
  // smartctl.messages with severity "error" ("Unable to detect device type",
  // "Device is in STANDBY mode, exit(2)"), joined by "; ".
  std::string messages;
  // Fields left out as out of their range ("temperature.current: expected an
  // integer in [-273, 1000], found 1e+308; left out").
  std::vector<std::string> warnings;
  bool operator==(const SmartReport&) const = default;

  // smartctl read the device's health (a verdict or a health log).
  bool HasHealth() const { return passed.has_value() || nvme.has_value(); }
  // -n standby found the disk asleep and left it so.
  bool InStandby() const { return messages.find("STANDBY") != std::string::npos; }
};

// `text` is smartctl's whole standard output; `source` names it in errors. A
// document that is not smartctl's JSON (truncated, another program's) is an
// error naming what was expected; a field of the wrong type too.
Result<SmartReport> ParseSmartctlJson(std::string_view text, std::string_view source);

}  // namespace iowatch::collectors
