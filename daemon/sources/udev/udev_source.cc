#include "daemon/sources/udev/udev_source.h"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectors/udev/multipath.h"
#include "collectors/udev/udev_data.h"
#include "common/file_tree.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"

namespace iowatch::daemon {
namespace {

// How long entries read are served before they are read again.
constexpr double kUdevRefreshSeconds = 60;

using DeviceList = std::shared_ptr<const std::vector<collectors::BlockDevice>>;

class UdevSource final : public SampleSource {
 public:
  // Fills out.udev and appends the "udev" and "multipath" collectors' status.
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  // Reads every device's entry into devices_ and status_.
  void ReadAll(const FileTree& udev_data, const std::vector<collectors::BlockDevice>& devices);
  void ReadOne(const FileTree& udev_data, const collectors::BlockDevice& device);
  // The multipath maps among devices_, read now: a path's state changes
  // without a udev event on the map.
  CollectorStatus ReadMultipath(const FileTree& sysfs,
                                std::vector<collectors::MultipathMap>& maps) const;

  DeviceList read_for_;  // the device list the entries were read for
  std::optional<double> read_at_;
  std::vector<UdevDeviceSeries> devices_;
  CollectorStatus status_;
  uint64_t parse_errors_total_ = 0;
};

// An ATA property that is not a number, as a skipped line names its file.
Error UnparsedAtaValue(const collectors::UdevProperties& properties, const std::string& key,
                       const std::string& path) {
  return Error::Parse(fmt::format("{}: expected a number, found '{}'", key, properties.Get(key)),
                      path, 0);
}

}  // namespace

void UdevSource::ReadOne(const FileTree& udev_data, const collectors::BlockDevice& device) {
  if (device.malformed_dev) return;
  const auto entry = collectors::ReadUdevData(udev_data, device.major, device.minor);
  if (!entry) {
    if (status_.success) status_.error = entry.error().ToString();
    status_.success = false;
    return;
  }
  if (!*entry) return;
  const collectors::UdevProperties& properties = **entry;
  std::vector<Error> skipped = properties.skipped;
  collectors::NodeUdevFigures figures = collectors::NodeExporterUdevFigures(properties);
  const std::string path = udev_data.PathOf(fmt::format("b{}:{}", device.major, device.minor));
  for (const std::string& key : figures.unparsed) {
    skipped.push_back(UnparsedAtaValue(properties, key, path));
  }
  parse_errors_total_ += skipped.size();
  if (!skipped.empty() && status_.parse_error.empty()) {
    status_.parse_error = skipped.front().ToString();
  }
  devices_.push_back({device.name, std::move(figures)});
}

void UdevSource::ReadAll(const FileTree& udev_data,
                         const std::vector<collectors::BlockDevice>& devices) {
  devices_.clear();
  status_ = CollectorStatus{"udev", 0, true, 0, {}, {}};
  if (!udev_data.Exists("")) {
    status_.error = fmt::format("no udev database: {} does not exist", udev_data.root().string());
    return;
  }
  for (const collectors::BlockDevice& device : devices) ReadOne(udev_data, device);
}

CollectorStatus UdevSource::ReadMultipath(const FileTree& sysfs,
                                          std::vector<collectors::MultipathMap>& maps) const {
  CollectorStatus status{"multipath", 0, true, 0, {}, {}};
  for (const UdevDeviceSeries& series : devices_) {
    const auto& dm = series.figures.device_mapper;
    if (!dm || !collectors::IsMultipathUuid(dm->uuid)) continue;
    auto map = collectors::ReadMultipathMap(sysfs, series.device, dm->name);
    if (map) {
      maps.push_back(std::move(*map));
      continue;
    }
    if (map.error().code == ErrorCode::kNotFound) continue;  // removed since udev's entry was read
    if (status.success) status.error = map.error().ToString();
    status.success = false;
  }
  return status;
}

void UdevSource::Collect(const FileTree& /*procfs*/, const FileTree& sysfs,
                         const SourceContext& context, Snapshot& out) {
  double start = context.now();
  const bool stale = !read_at_ || start - *read_at_ >= kUdevRefreshSeconds;
  if (stale || context.devices != read_for_) {
    ReadAll(FileTree(context.options->udev_data), *context.devices);
    read_for_ = context.devices;
    read_at_ = start;
  }
  out.udev.devices = devices_;
  CollectorStatus status = status_;
  status.parse_errors_total = parse_errors_total_;
  status.duration_seconds = context.now() - start;
  out.collectors.push_back(std::move(status));

  start = context.now();
  CollectorStatus multipath = ReadMultipath(sysfs, out.udev.multipath);
  multipath.duration_seconds = context.now() - start;
  out.collectors.push_back(std::move(multipath));
}

const SourceDescriptor& UdevSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"udev", "multipath"};
  static constexpr SourceDescriptor kDescriptor = Registered<UdevSource, &Snapshot::udev>({
      .name = "udev",
      .reads = "<udev data>/b<major>:<minor> of each exported device, when devices come and go "
               "and every minute; each multipath map's <sysfs>/block/<dm>/slaves/ and their "
               "device/state, each sample",
      .collectors = kCollectors,
      .add_families = AddUdevFamilies,
  });
  return kDescriptor;
}

}  // namespace iowatch::daemon
