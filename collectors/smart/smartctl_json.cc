#include "collectors/smart/smartctl_json.h"

#include <nlohmann/json.hpp>

namespace iowatch::collectors {
namespace {

using nlohmann::json;

// doc[key] as T when present and not null.
template <typename T>
std::optional<T> Optional(const json& doc, std::string_view key) {
  const auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

const json& Object(const json& doc, std::string_view key) {
  static const json kEmpty = json::object();
  const auto it = doc.find(key);
  return it != doc.end() && it->is_object() ? *it : kEmpty;
}

void ReadIdentity(const json& doc, SmartReport& out) {
  out.protocol = Optional<std::string>(Object(doc, "device"), "protocol").value_or("");
  out.model = Optional<std::string>(doc, "model_name").value_or("");
  out.serial = Optional<std::string>(doc, "serial_number").value_or("");
  out.firmware = Optional<std::string>(doc, "firmware_version").value_or("");
}

void ReadMessages(const json& smartctl, SmartReport& out) {
  const auto it = smartctl.find("messages");
  if (it == smartctl.end()) return;
  for (const json& m : *it) {
    if (Optional<std::string>(m, "severity").value_or("") != "error") continue;
    if (!out.messages.empty()) out.messages += "; ";
    out.messages += m.at("string").get<std::string>();
  }
}

void ReadTemperature(const json& doc, SmartReport& out) {
  const json& t = Object(doc, "temperature");
  out.temperature_celsius = Optional<int64_t>(t, "current");
  // NVMe's warning threshold, else ATA SCT's operating limit, else SCSI's trip point.
  out.temperature_limit_celsius =
      Optional<int64_t>(Object(doc, "nvme_composite_temperature_threshold"), "warning");
  if (!out.temperature_limit_celsius) {
    out.temperature_limit_celsius = Optional<int64_t>(t, "op_limit_max");
  }
  if (!out.temperature_limit_celsius)
    out.temperature_limit_celsius = Optional<int64_t>(t, "drive_trip");
}

void ReadAtaAttributes(const json& doc, SmartReport& out) {
  const json& attributes = Object(doc, "ata_smart_attributes");
  const auto table = attributes.find("table");
  if (table == attributes.end()) return;
  for (const json& a : *table) {
    out.attributes.push_back({a.at("id").get<uint32_t>(), a.at("name").get<std::string>(),
                              a.at("value").get<int64_t>(), a.at("worst").get<int64_t>(),
                              a.at("thresh").get<int64_t>(),
                              a.at("raw").at("value").get<uint64_t>(),
                              Optional<bool>(Object(a, "flags"), "prefailure").value_or(false)});
  }
}

void ReadNvme(const json& doc, SmartReport& out) {
  const auto it = doc.find("nvme_smart_health_information_log");
  if (it == doc.end() || !it->is_object()) return;
  const json& h = *it;
  out.nvme = NvmeHealth{h.at("critical_warning").get<uint64_t>(),
                        h.at("available_spare").get<uint64_t>(),
                        h.at("available_spare_threshold").get<uint64_t>(),
                        h.at("percentage_used").get<uint64_t>(),
                        h.at("data_units_read").get<uint64_t>(),
                        h.at("data_units_written").get<uint64_t>(),
                        h.at("media_errors").get<uint64_t>(),
                        h.at("num_err_log_entries").get<uint64_t>(),
                        h.at("unsafe_shutdowns").get<uint64_t>()};
}

void ReadScsi(const json& doc, SmartReport& out) {
  out.scsi.grown_defects = Optional<uint64_t>(doc, "scsi_grown_defect_list");
  const json& log = Object(doc, "scsi_error_counter_log");
  out.scsi.uncorrected_read = Optional<uint64_t>(Object(log, "read"), "total_uncorrected_errors");
  out.scsi.uncorrected_write = Optional<uint64_t>(Object(log, "write"), "total_uncorrected_errors");
  out.scsi.uncorrected_verify =
      Optional<uint64_t>(Object(log, "verify"), "total_uncorrected_errors");
}

}  // namespace

Result<SmartReport> ParseSmartctlJson(std::string_view text, std::string_view source) {
  try {
    const json doc = json::parse(text);
    const auto smartctl = doc.find("smartctl");
    if (!doc.is_object() || smartctl == doc.end() || !smartctl->contains("exit_status")) {
      return std::unexpected(
          Error::Parse("expected smartctl's JSON output (an object with smartctl.exit_status)",
                       std::string(source), 1));
    }
    SmartReport out;
    out.exit_status = smartctl->at("exit_status").get<uint32_t>();
    ReadMessages(*smartctl, out);
    ReadIdentity(doc, out);
    out.passed = Optional<bool>(Object(doc, "smart_status"), "passed");
    ReadTemperature(doc, out);
    out.power_on_hours = Optional<uint64_t>(Object(doc, "power_on_time"), "hours");
    out.power_cycles = Optional<uint64_t>(doc, "power_cycle_count");
    ReadAtaAttributes(doc, out);
    ReadNvme(doc, out);
    ReadScsi(doc, out);
    return out;
  } catch (const json::exception& e) {
    return std::unexpected(Error::Parse(
        std::string("expected smartctl's JSON output (smartmontools 7.3 schema): ") + e.what(),
        std::string(source), 1));
  }
}

}  // namespace iowatch::collectors
