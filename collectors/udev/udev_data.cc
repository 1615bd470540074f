#include "collectors/udev/udev_data.h"

#include <fmt/format.h>

#include <charconv>

#include "collectors/text/text_scan.h"
#include "common/utf8.h"

namespace iowatch::collectors {
namespace {

// Values become label values.
std::string LabelSafe(std::string_view text) {
  std::string safe = ToValidUtf8(text);
  while (const std::optional<size_t> control = ControlCharacterAt(safe)) safe[*control] = ' ';
  return safe;
}

// A whole number as Go's strconv.ParseFloat reads udev's integers.
std::optional<double> ParseNumber(std::string_view text) {
  double value = 0;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || parsed.ec != std::errc() || parsed.ptr != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// The ATA property `key` into `out` when present; its key into unparsed
// when it is not a number.
void TakeAtaValue(const UdevProperties& properties, std::string_view key,
                  std::optional<double>& out, std::vector<std::string>& unparsed) {
  const auto found = properties.values.find(key);
  if (found == properties.values.end()) return;
  out = ParseNumber(found->second);
  if (!out) unparsed.emplace_back(key);
}

}  // namespace

std::string_view UdevProperties::Get(std::string_view key) const {
  const auto found = values.find(key);
  return found == values.end() ? std::string_view() : std::string_view(found->second);
}

UdevProperties ParseUdevData(std::string_view text, std::string_view path) {
  UdevProperties properties;
  ForEachLine(text, [&](std::string_view line, int number) {
    if (!line.starts_with("E:")) return;
    line.remove_prefix(2);
    const size_t equals = line.find('=');
    if (equals == 0 || equals == std::string_view::npos) {
      properties.skipped.push_back(
          Error::Parse(fmt::format("expected 'E:KEY=value', found 'E:{}'", LabelSafe(line)),
                       std::string(path), number));
      return;
    }
    properties.values.insert_or_assign(LabelSafe(line.substr(0, equals)),
                                       LabelSafe(line.substr(equals + 1)));
  });
  return properties;
}

Result<std::optional<UdevProperties>> ReadUdevData(const FileTree& udev_data, uint32_t major,
                                                   uint32_t minor) {
  const std::string name = fmt::format("b{}:{}", major, minor);
  const auto text = udev_data.Read(name, kMaxUdevDataBytes);
  if (!text && text.error().code == ErrorCode::kNotFound) return std::nullopt;
  if (!text) return ErrorOf(text);
  return ParseUdevData(*text, udev_data.PathOf(name).string());
}

NodeUdevFigures NodeExporterUdevFigures(const UdevProperties& properties) {
  NodeUdevFigures figures;
  if (const std::string_view type = properties.Get("ID_FS_TYPE"); !type.empty()) {
    figures.filesystem = UdevFilesystem{.type = std::string(type),
                                        .usage = std::string(properties.Get("ID_FS_USAGE")),
                                        .uuid = std::string(properties.Get("ID_FS_UUID")),
                                        .version = std::string(properties.Get("ID_FS_VERSION"))};
  }
  if (const std::string_view name = properties.Get("DM_NAME"); !name.empty()) {
    figures.device_mapper =
        UdevDeviceMapper{.name = std::string(name),
                         .uuid = std::string(properties.Get("DM_UUID")),
                         .vg_name = std::string(properties.Get("DM_VG_NAME")),
                         .lv_name = std::string(properties.Get("DM_LV_NAME")),
                         .lv_layer = std::string(properties.Get("DM_LV_LAYER"))};
  }
  if (!properties.Get("ID_ATA").empty()) {
    TakeAtaValue(properties, "ID_ATA_ROTATION_RATE_RPM", figures.ata_rotation_rate_rpm,
                 figures.unparsed);
    TakeAtaValue(properties, "ID_ATA_WRITE_CACHE", figures.ata_write_cache, figures.unparsed);
    TakeAtaValue(properties, "ID_ATA_WRITE_CACHE_ENABLED", figures.ata_write_cache_enabled,
                 figures.unparsed);
  }
  return figures;
}

}  // namespace iowatch::collectors
