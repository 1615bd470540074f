// udev's database entry of a block device: <udev data dir>/b<major>:<minor>
// (/run/udev/data by default), which systemd-udevd writes after each event
// (sd-device's device_update_db): one record a line, "<letter>:<text>". Only
// the properties, "E:KEY=value", are read (udevadm info's "E:" lines); the
// symlinks (S:), tags (G:, Q:), priority (L:) and the rest are ignored.
// NodeExporterUdevFigures gives what node_exporter's diskstats collector
// exports from them (node_disk_filesystem_info, node_disk_device_mapper_info,
// node_disk_ata_*).
// Thread-safety: pure functions of the tree they are given.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::collectors {

// An entry is a few kB (its symlinks and properties); the limit bounds a
// planted giant.
inline constexpr size_t kMaxUdevDataBytes = 1 << 20;

struct UdevProperties {
  // KEY -> value, each as valid UTF-8 without control characters; a key
  // written twice keeps its last value, as node_exporter's reader does.
  std::map<std::string, std::string, std::less<>> values;
  // "E:" lines without "KEY=": skipped, each naming its file and line.
  std::vector<Error> skipped;

  // The value of `key`; "" when absent (or written empty: "E:ID_FS_TYPE=").
  std::string_view Get(std::string_view key) const;
};

// Parses an entry's text; `path` names it in the skipped lines' errors.
UdevProperties ParseUdevData(std::string_view text, std::string_view path);

// The entry "b<major>:<minor>" of `udev_data` (the data directory);
// nullopt when there is none: no udev (a container), or a device udev has
// not processed yet. Other read failures are errors naming the file.
Result<std::optional<UdevProperties>> ReadUdevData(const FileTree& udev_data, uint32_t major,
                                                   uint32_t minor);

// node_disk_filesystem_info's labels: what blkid found on the device.
struct UdevFilesystem {
  std::string type;     // ID_FS_TYPE: ext4, swap, LVM2_member, crypto_LUKS...
  std::string usage;    // ID_FS_USAGE: filesystem, other, raid, crypto
  std::string uuid;     // ID_FS_UUID
  std::string version;  // ID_FS_VERSION
  bool operator==(const UdevFilesystem&) const = default;
};

// node_disk_device_mapper_info's labels, from dm's udev rules.
struct UdevDeviceMapper {
  std::string name;      // DM_NAME
  std::string uuid;      // DM_UUID: "LVM-…", "CRYPT-…", "mpath-…"
  std::string vg_name;   // DM_VG_NAME (LVM only)
  std::string lv_name;   // DM_LV_NAME
  std::string lv_layer;  // DM_LV_LAYER: "" for the volume itself, "tpool", "real"...
  bool operator==(const UdevDeviceMapper&) const = default;
};

// One device's node_disk_* figures from udev, by node_exporter's rules
// (collector/diskstats_linux.go).
struct NodeUdevFigures {
  std::optional<UdevFilesystem> filesystem;       // when ID_FS_TYPE is not empty
  std::optional<UdevDeviceMapper> device_mapper;  // when DM_NAME is not empty
  // When ID_ATA is not empty (udev's ata_id sets it to 1), each of these
  // that is present and a number; the others have no series.
  std::optional<double> ata_rotation_rate_rpm;    // ID_ATA_ROTATION_RATE_RPM, 0 for an SSD
  std::optional<double> ata_write_cache;          // ID_ATA_WRITE_CACHE: 1 when it has one
  std::optional<double> ata_write_cache_enabled;  // ID_ATA_WRITE_CACHE_ENABLED
  // ATA properties present but not a number (node_exporter logs and skips them).
  std::vector<std::string> unparsed;
  bool operator==(const NodeUdevFigures&) const = default;
};

NodeUdevFigures NodeExporterUdevFigures(const UdevProperties& properties);

}  // namespace iowatch::collectors
