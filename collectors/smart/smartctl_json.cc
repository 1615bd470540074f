#include "collectors/smart/smartctl_json.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace iowatch::collectors {
namespace {

using nlohmann::json;

// Every field's range. A value outside it is smartctl's or the firmware's
// garbage (a temperature of 1e308, a count of -1): shown as such it would
// read as a real figure, so it is left out and named in the report's
// warnings instead.
constexpr int64_t kCelsiusMin = -273;  // absolute zero
constexpr int64_t kCelsiusMax = 1000;  // far above any sensor's encoding of a real reading
constexpr uint64_t kByteMax = 255;     // one-byte fields: ATA normalized values, NVMe percents
constexpr uint64_t kAtaRawMax = (uint64_t{1} << 48) - 1;  // an ATA raw value has 6 bytes
constexpr uint64_t kCountMax = std::numeric_limits<uint64_t>::max();

// One document's reading: the fields it rejected, as it goes.
struct Reader {
  std::vector<std::string>& warnings;

  // obj[key] as an integer of type T within [lo, hi]; none when absent or
  // null, and when it is not an integer in range (a warning naming `where`
  // and the value then). long double holds every int64, uint64 and double
  // exactly, so the comparisons are exact and the conversion defined.
  template <typename T>
  std::optional<T> Number(const json& obj, std::string_view key, std::string_view where, T lo,
                          T hi) {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    long double v = std::numeric_limits<long double>::quiet_NaN();
    if (it->is_number_unsigned()) {
      v = static_cast<long double>(it->get<uint64_t>());
    } else if (it->is_number_integer()) {
      v = static_cast<long double>(it->get<int64_t>());
    } else if (it->is_number_float()) {
      v = static_cast<long double>(it->get<double>());
    }
    if (!std::isfinite(v) || std::trunc(v) != v || v < static_cast<long double>(lo) ||
        v > static_cast<long double>(hi)) {
      warnings.push_back(fmt::format("{}: expected an integer in [{}, {}], found {}; left out",
                                     where, lo, hi, it->dump()));
      return std::nullopt;
    }
    return static_cast<T>(v);
  }
  std::optional<uint64_t> Count(const json& obj, std::string_view key, std::string_view where) {
    return Number<uint64_t>(obj, key, where, 0, kCountMax);
  }
  std::optional<int64_t> Celsius(const json& obj, std::string_view key, std::string_view where) {
    return Number<int64_t>(obj, key, where, kCelsiusMin, kCelsiusMax);
  }
};

// doc[key] as T when present and not null.
template <typename T>
std::optional<T> Optional(const json& doc, std::string_view key) {
  const auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

// The first of `keys` present, as a string; "" when none is.
std::string FirstString(const json& doc, std::initializer_list<std::string_view> keys) {
  for (const std::string_view key : keys) {
    if (auto s = Optional<std::string>(doc, key)) return *s;
  }
  return "";
}

const json& Object(const json& doc, std::string_view key) {
  static const json kEmpty = json::object();
  const auto it = doc.find(key);
  return it != doc.end() && it->is_object() ? *it : kEmpty;
}

// smartctl 7.3 renamed the SCSI identity fields: model_name, vendor, product
// and revision (6.x-7.2) became scsi_model_name, scsi_vendor, scsi_product
// and scsi_revision. A SCSI disk's firmware is its revision; ATA's and NVMe's
// is firmware_version in every version.
void ReadIdentity(const json& doc, SmartReport& out) {
  out.protocol = Optional<std::string>(Object(doc, "device"), "protocol").value_or("");
  out.model = FirstString(doc, {"model_name", "scsi_model_name"});
  if (out.model.empty()) {
    const std::string vendor = FirstString(doc, {"scsi_vendor", "vendor"});
    const std::string product = FirstString(doc, {"scsi_product", "product"});
    out.model = vendor.empty() || product.empty() ? vendor + product : vendor + " " + product;
  }
  out.serial = Optional<std::string>(doc, "serial_number").value_or("");
  out.firmware = FirstString(doc, {"firmware_version", "scsi_revision", "revision"});
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

void ReadTemperature(const json& doc, Reader& in, SmartReport& out) {
  const json& t = Object(doc, "temperature");
  out.temperature_celsius = in.Celsius(t, "current", "temperature.current");
  // NVMe's warning threshold, else ATA SCT's operating limit, else SCSI's trip point.
  out.temperature_limit_celsius =
      in.Celsius(Object(doc, "nvme_composite_temperature_threshold"), "warning",
                 "nvme_composite_temperature_threshold.warning");
  if (!out.temperature_limit_celsius) {
    out.temperature_limit_celsius = in.Celsius(t, "op_limit_max", "temperature.op_limit_max");
  }
  if (!out.temperature_limit_celsius) {
    out.temperature_limit_celsius = in.Celsius(t, "drive_trip", "temperature.drive_trip");
  }
}

// An attribute with a number out of range is left out whole: its row
// without the number would say something else.
void ReadAtaAttributes(const json& doc, Reader& in, SmartReport& out) {
  const json& attributes = Object(doc, "ata_smart_attributes");
  const auto table = attributes.find("table");
  if (table == attributes.end()) return;
  for (const json& a : *table) {
    const std::string name = a.at("name").get<std::string>();
    const auto id = in.Number<uint32_t>(a, "id", "ata_smart_attributes " + name + ".id", 1, 255);
    if (!id) continue;
    const std::string where = fmt::format("ata_smart_attributes {} ({})", *id, name);
    const auto value = in.Number<int64_t>(a, "value", where + ".value", 0, kByteMax);
    const auto worst = in.Number<int64_t>(a, "worst", where + ".worst", 0, kByteMax);
    const auto thresh = in.Number<int64_t>(a, "thresh", where + ".thresh", 0, kByteMax);
    const auto raw =
        in.Number<uint64_t>(Object(a, "raw"), "value", where + ".raw.value", 0, kAtaRawMax);
    if (!value || !worst || !thresh || !raw) continue;
    out.attributes.push_back({*id, name, *value, *worst, *thresh, *raw,
                              Optional<bool>(Object(a, "flags"), "prefailure").value_or(false)});
  }
}

void ReadNvme(const json& doc, Reader& in, SmartReport& out) {
  const auto it = doc.find("nvme_smart_health_information_log");
  if (it == doc.end() || !it->is_object()) return;
  const json& h = *it;
  const auto byte = [&](std::string_view key) {
    return in.Number<uint64_t>(h, key, fmt::format("nvme_smart_health_information_log.{}", key), 0,
                               kByteMax);
  };
  const auto count = [&](std::string_view key) {
    return in.Count(h, key, fmt::format("nvme_smart_health_information_log.{}", key));
  };
  out.nvme = NvmeHealth{
      byte("critical_warning"), byte("available_spare"),      byte("available_spare_threshold"),
      byte("percentage_used"),  count("data_units_read"),     count("data_units_written"),
      count("media_errors"),    count("num_err_log_entries"), count("unsafe_shutdowns")};
}

void ReadScsi(const json& doc, Reader& in, SmartReport& out) {
  out.scsi.grown_defects = in.Count(doc, "scsi_grown_defect_list", "scsi_grown_defect_list");
  const json& log = Object(doc, "scsi_error_counter_log");
  const auto uncorrected = [&](std::string_view op) {
    return in.Count(Object(log, op), "total_uncorrected_errors",
                    fmt::format("scsi_error_counter_log.{}.total_uncorrected_errors", op));
  };
  out.scsi.uncorrected_read = uncorrected("read");
  out.scsi.uncorrected_write = uncorrected("write");
  out.scsi.uncorrected_verify = uncorrected("verify");
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
    Reader in{out.warnings};
    const auto exit_status =
        in.Number<uint32_t>(*smartctl, "exit_status", "smartctl.exit_status", 0, 255);
    if (!exit_status) {
      return std::unexpected(Error::Parse(
          "expected smartctl's JSON output: " + out.warnings.front(), std::string(source), 1));
    }
    out.exit_status = *exit_status;
    ReadMessages(*smartctl, out);
    ReadIdentity(doc, out);
    out.passed = Optional<bool>(Object(doc, "smart_status"), "passed");
    ReadTemperature(doc, in, out);
    out.power_on_hours = in.Count(Object(doc, "power_on_time"), "hours", "power_on_time.hours");
    out.power_cycles = in.Count(doc, "power_cycle_count", "power_cycle_count");
    ReadAtaAttributes(doc, in, out);
    ReadNvme(doc, in, out);
    ReadScsi(doc, in, out);
    return out;
  } catch (const json::exception& e) {
    return std::unexpected(Error::Parse(
        std::string("expected smartctl's JSON output (smartmontools 6.7-7.4 schema): ") + e.what(),
        std::string(source), 1));
  }
}

}  // namespace iowatch::collectors
