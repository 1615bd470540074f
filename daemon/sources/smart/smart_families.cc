// Device health under smartctl_exporter's names (prometheus-community),
// iowatch_smart_* for smartctl_device_*: joined to iowatch_disk_info by device.
#include <fmt/format.h>

#include <string>

#include "daemon/sources/smart/smart_source.h"

namespace iowatch::daemon {
namespace {

using collectors::SmartReport;

size_t SmartDevices(const Snapshot& s) { return s.smart.devices.size(); }

const SmartReport* ReportOf(const Snapshot& s, size_t i) {
  const auto& r = s.smart.devices[i].report;
  return r ? &*r : nullptr;
}

void Up(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const SmartSeries& d = s.smart.devices[i];
  w.SampleInt({{"device", d.device}}, d.error.empty() ? 1 : 0);
}

void Info(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const SmartReport* r = ReportOf(s, i);
  if (r == nullptr || r->protocol.empty()) return;
  w.SampleInt({{"device", s.smart.devices[i].device},
               {"firmware_version", r->firmware},
               {"model_name", r->model},
               {"protocol", r->protocol},
               {"serial_number", r->serial}},
              1);
}

void ExitStatus(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  if (const SmartReport* r = ReportOf(s, i)) {
    w.SampleInt({{"device", s.smart.devices[i].device}}, r->exit_status);
  }
}

// An optional number of the report as a double: one of a row's values.
template <typename T>
std::optional<double> AsDouble(const std::optional<T>& value, double scale = 1.0) {
  return value ? std::optional<double>(scale * static_cast<double>(*value)) : std::nullopt;
}

using ScalarOf = std::optional<double> (*)(const SmartReport&);
constexpr FamilyRow<ScalarOf> kScalars[] = {
    {"iowatch_smart_status_passed", "gauge",
     "1 when the device's overall SMART self-assessment passes, 0 when it says FAILING.",
     [](const SmartReport& r) { return AsDouble(r.passed); }},
    {"iowatch_smart_temperature_celsius", "gauge", "Current temperature, °C.",
     [](const SmartReport& r) { return AsDouble(r.temperature_celsius); }},
    {"iowatch_smart_temperature_limit_celsius", "gauge",
     "The device's own temperature limit, °C: NVMe's warning threshold, ATA SCT's "
     "operating maximum, SCSI's trip point.",
     [](const SmartReport& r) { return AsDouble(r.temperature_limit_celsius); }},
    {"iowatch_smart_power_on_seconds", "counter", "Power-on time (hours x 3600).",
     [](const SmartReport& r) { return AsDouble(r.power_on_hours, 3600.0); }},
    {"iowatch_smart_power_cycles_total", "counter", "Power cycles.",
     [](const SmartReport& r) { return AsDouble(r.power_cycles); }},
};

void ScalarSample(const Snapshot& s, size_t i, size_t arg, ExpositionWriter& w) {
  const SmartReport* r = ReportOf(s, i);
  if (r == nullptr) return;
  if (const auto v = kScalars[arg].value(*r)) w.Sample({{"device", s.smart.devices[i].device}}, *v);
}

void Attributes(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const SmartReport* r = ReportOf(s, i);
  if (r == nullptr) return;
  for (const collectors::SmartAttribute& a : r->attributes) {
    const std::string id = fmt::format("{}", a.id);
    const auto sample = [&](std::string_view type, double value) {
      w.Sample({{"attribute_id", id},
                {"attribute_name", a.name},
                {"attribute_value_type", type},
                {"device", s.smart.devices[i].device}},
               value);
    };
    sample("value", static_cast<double>(a.value));
    sample("worst", static_cast<double>(a.worst));
    sample("thresh", static_cast<double>(a.thresh));
    sample("raw", static_cast<double>(a.raw));
  }
}

using collectors::NvmeHealth;
struct NvmeValue {
  std::optional<uint64_t> NvmeHealth::*field;
  double scale;
};
constexpr FamilyRow<NvmeValue> kNvme[] = {
    {"iowatch_smart_nvme_critical_warning",
     "gauge",
     "NVMe critical warning bits: 0x1 spare below threshold, 0x2 temperature, 0x4 reliability "
     "degraded, 0x8 read-only, 0x10 volatile backup failed; 0 when none.",
     {&NvmeHealth::critical_warning, 1.0}},
    {"iowatch_smart_available_spare_ratio",
     "gauge",
     "NVMe available spare (0..1).",
     {&NvmeHealth::available_spare, 0.01}},
    {"iowatch_smart_available_spare_threshold_ratio",
     "gauge",
     "NVMe available spare threshold (0..1): below it the device warns.",
     {&NvmeHealth::available_spare_threshold, 0.01}},
    {"iowatch_smart_percentage_used_ratio",
     "gauge",
     "NVMe's estimate of its life used (0..1; may exceed 1).",
     {&NvmeHealth::percentage_used, 0.01}},
    {"iowatch_smart_media_errors_total",
     "counter",
     "NVMe media and data integrity errors (unrecovered) since manufacture.",
     {&NvmeHealth::media_errors, 1.0}},
    {"iowatch_smart_error_log_entries_total",
     "counter",
     "NVMe error information log entries.",
     {&NvmeHealth::error_log_entries, 1.0}},
    {"iowatch_smart_unsafe_shutdowns_total",
     "counter",
     "NVMe unsafe shutdowns.",
     {&NvmeHealth::unsafe_shutdowns, 1.0}},
    {"iowatch_smart_read_bytes_total",
     "counter",
     "Bytes the NVMe device reports read (data units of 512,000 bytes).",
     {&NvmeHealth::data_units_read, 512000.0}},
    {"iowatch_smart_written_bytes_total",
     "counter",
     "Bytes the NVMe device reports written (data units of 512,000 bytes).",
     {&NvmeHealth::data_units_written, 512000.0}},
};

// NVMe's health log: arg selects the field, with its scale; a field
// smartctl gave out of range is absent.
void Nvme(const Snapshot& s, size_t i, size_t arg, ExpositionWriter& w) {
  const SmartReport* r = ReportOf(s, i);
  if (r == nullptr || !r->nvme) return;
  const auto [field, scale] = kNvme[arg].value;
  if (const auto v = AsDouble((*r->nvme).*field, scale)) {
    w.Sample({{"device", s.smart.devices[i].device}}, *v);
  }
}

void ScsiDefects(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const SmartReport* r = ReportOf(s, i);
  if (r != nullptr && r->scsi.grown_defects) {
    w.SampleInt({{"device", s.smart.devices[i].device}}, *r->scsi.grown_defects);
  }
}

void ScsiUncorrected(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const SmartReport* r = ReportOf(s, i);
  if (r == nullptr) return;
  const std::pair<const char*, const std::optional<uint64_t>*> ops[] = {
      {"read", &r->scsi.uncorrected_read},
      {"verify", &r->scsi.uncorrected_verify},
      {"write", &r->scsi.uncorrected_write}};
  for (const auto& [op, value] : ops) {
    if (*value) w.SampleInt({{"device", s.smart.devices[i].device}, {"op", op}}, **value);
  }
}

}  // namespace

void AddSmartFamilies(TableBuilder& t) {
  t.Add("iowatch_smart_up", "gauge",
        "1 when smartctl gave the disk's health at its last read, else 0 (the collector's log "
        "says why: no SMART here, no privilege, asleep before any read).",
        {SmartDevices, Up});
  t.Add("iowatch_smart_device_info", "gauge",
        "A disk smartctl identified (always 1): protocol ATA, NVMe or SCSI, model, serial, "
        "firmware.",
        {SmartDevices, Info});
  t.Add("iowatch_smart_exit_status", "gauge",
        "smartctl's exit status bits at the last read (smartctl(8)): 8 failing, 16 prefail "
        "attribute at threshold, 32 past threshold before, 64 error log, 128 self-test errors.",
        {SmartDevices, ExitStatus});
  AddRowFamilies(t, kScalars, SmartDevices, ScalarSample);
  t.Add("iowatch_smart_attribute", "gauge",
        "ATA SMART attributes: the normalized value, the worst, the threshold (at or below it the "
        "attribute failed) and the raw value (vendor units).",
        {SmartDevices, Attributes});
  AddRowFamilies(t, kNvme, SmartDevices, Nvme);
  t.Add("iowatch_smart_scsi_grown_defects", "gauge",
        "SCSI grown defect list: sectors remapped since the disk left the factory.",
        {SmartDevices, ScsiDefects});
  t.Add("iowatch_smart_scsi_uncorrected_errors_total", "counter",
        "SCSI error counter log: total uncorrected errors by op.", {SmartDevices, ScsiUncorrected});
}

}  // namespace iowatch::daemon
