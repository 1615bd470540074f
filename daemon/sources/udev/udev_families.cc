// udev's families: node_exporter's node_disk_filesystem_info,
// node_disk_device_mapper_info and node_disk_ata_* under iowatch_disk_*,
// with the same labels and values; the multipath maps' paths and states.
#include <optional>

#include "collectors/udev/udev_data.h"
#include "daemon/sources/udev/udev_source.h"

namespace iowatch::daemon {
namespace {

using collectors::NodeUdevFigures;

size_t UdevDevices(const Snapshot& s) { return s.udev.devices.size(); }

// The ATA figures, one family each (only where ID_ATA is set).
constexpr FamilyRow<std::optional<double> NodeUdevFigures::*> kUdevAtaRows[] = {
    {"iowatch_disk_ata_rotation_rate_rpm", "gauge",
     "ATA disk rotation rate in RPM, 0 for an SSD (udev's ID_ATA_ROTATION_RATE_RPM; "
     "node_exporter's node_disk_ata_rotation_rate_rpm).",
     &NodeUdevFigures::ata_rotation_rate_rpm},
    {"iowatch_disk_ata_write_cache", "gauge",
     "1 when the ATA disk has a write cache (udev's ID_ATA_WRITE_CACHE; node_exporter's "
     "node_disk_ata_write_cache).",
     &NodeUdevFigures::ata_write_cache},
    {"iowatch_disk_ata_write_cache_enabled", "gauge",
     "1 when the ATA disk's write cache is enabled (udev's ID_ATA_WRITE_CACHE_ENABLED; "
     "node_exporter's node_disk_ata_write_cache_enabled).",
     &NodeUdevFigures::ata_write_cache_enabled},
};

void UdevAta(const Snapshot& s, size_t i, size_t arg, ExpositionWriter& w) {
  const UdevDeviceSeries& series = s.udev.devices[i];
  const std::optional<double>& value = series.figures.*kUdevAtaRows[arg].value;
  if (value) w.Sample({{"device", series.device}}, *value);
}

void UdevFilesystem(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const UdevDeviceSeries& series = s.udev.devices[i];
  const auto& fs = series.figures.filesystem;
  if (!fs) return;
  w.SampleInt({{"device", series.device},
               {"type", fs->type},
               {"usage", fs->usage},
               {"uuid", fs->uuid},
               {"version", fs->version}},
              1);
}

void UdevDeviceMapper(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const UdevDeviceSeries& series = s.udev.devices[i];
  const auto& dm = series.figures.device_mapper;
  if (!dm) return;
  w.SampleInt({{"device", series.device},
               {"name", dm->name},
               {"uuid", dm->uuid},
               {"vg_name", dm->vg_name},
               {"lv_name", dm->lv_name},
               {"lv_layer", dm->lv_layer}},
              1);
}

size_t MultipathMaps(const Snapshot& s) { return s.udev.multipath.size(); }

void MultipathPaths(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const collectors::MultipathMap& map = s.udev.multipath[i];
  w.SampleInt({{"device", map.device}, {"name", map.name}}, map.paths.size());
}

void MultipathPathState(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const collectors::MultipathMap& map = s.udev.multipath[i];
  for (const collectors::MultipathPath& path : map.paths) {
    w.SampleInt(
        {{"device", map.device}, {"name", map.name}, {"path", path.name}, {"state", path.state}},
        1);
  }
}

}  // namespace

void AddUdevFamilies(TableBuilder& t) {
  AddRowFamilies(t, kUdevAtaRows, UdevDevices, UdevAta);
  t.Add("iowatch_disk_filesystem_info", "gauge",
        "1 per device holding a filesystem or another signature blkid knows, from udev's "
        "ID_FS_TYPE, ID_FS_USAGE, ID_FS_UUID and ID_FS_VERSION (node_exporter's "
        "node_disk_filesystem_info).",
        {UdevDevices, UdevFilesystem});
  t.Add("iowatch_disk_device_mapper_info", "gauge",
        "1 per device-mapper device, from udev's DM_NAME, DM_UUID, DM_VG_NAME, DM_LV_NAME and "
        "DM_LV_LAYER (node_exporter's node_disk_device_mapper_info).",
        {UdevDevices, UdevDeviceMapper});
  t.Add("iowatch_multipath_paths", "gauge",
        "Paths of each dm-multipath map (udev's DM_UUID mpath-...): the devices in "
        "<sysfs>/block/<dm>/slaves/.",
        {MultipathMaps, MultipathPaths});
  t.Add("iowatch_multipath_path_state", "gauge",
        "1 per path of a dm-multipath map, its SCSI device state as label (running, offline, "
        "transport-offline, blocked...; <sysfs>/block/<path>/device/state, unknown without one).",
        {MultipathMaps, MultipathPathState});
}

}  // namespace iowatch::daemon
