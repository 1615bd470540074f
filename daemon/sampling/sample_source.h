// A source of the sample, and the descriptor that registers it. Each source
// (daemon/sources/<name>/) reads its files on its own BoundedWorker, fills its
// share of a Snapshot and renders its families; the descriptor says all of
// that in one value, and daemon/sources/registry.cc lists the descriptors.
// The Sampler runs the sources it lists, the metrics renderer adds their
// families, `check-config` asks each whether it can run here, and
// docs/metrics.md's collector list (written by scripts/docs.py from each
// source's kCollectors) is tested against it: a new source is a folder, one
// line there and its field of the Snapshot (docs/development.md, "Adding a
// source"), as node_exporter's registerCollector.
// Thread-safety: a SampleSource is used by one job at a time (its worker's);
// descriptors are constants.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/file_tree.h"
#include "daemon/sampling/family_table.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"

namespace iowatch::daemon {

class SampleSource {
 public:
  virtual ~SampleSource() = default;
  // Reads this sample into `out`: the source's fields of the snapshot and
  // one status per collector it reports (none while it is switched off).
  // Never throws; a failure is a status with its cause.
  virtual void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
                       Snapshot& out) = 0;
};

// The fields of a Snapshot a source fills, as member pointers: moved from the
// part its job wrote, or copied from the previous snapshot when it did not
// answer in time (then only these fields: a whole snapshot is megabytes with
// 10,000 devices).
template <auto... kFields>
struct SnapshotFields {
  static void Move(Snapshot&& from, Snapshot& to) {
    ((to.*kFields = std::move(from.*kFields)), ...);
  }
  static void Copy(const Snapshot& from, Snapshot& to) { ((to.*kFields = from.*kFields), ...); }
};

inline bool AlwaysEnabled(const SamplerOptions&) { return true; }

struct SourceDescriptor {
  std::string_view name;  // its folder under daemon/sources/
  // What it reads, for docs and check-config ("/proc/pressure/{cpu,io,memory}").
  std::string_view reads;
  // The `collector` label values it reports, in snapshot order.
  std::span<const std::string_view> collectors;
  // The config key that switches it off; "" when it always runs.
  std::string_view config_switch = {};
  // Its settings, declared in its folder (config/settings.h): the loader
  // reads them, the bundled config and docs/configuration.md list them, and
  // the source reads their values from SamplerOptions::settings.
  std::span<const config::Setting> settings = {};
  bool (*enabled)(const SamplerOptions& options) = AlwaysEnabled;
  std::unique_ptr<SampleSource> (*make)() = nullptr;
  // Its fields of the snapshot (SnapshotFields<…>::Move and ::Copy).
  void (*move_fields)(Snapshot&& part, Snapshot& out) = nullptr;
  void (*copy_fields)(const Snapshot& last, Snapshot& out) = nullptr;
  // Adds the families it renders (family_table.h).
  void (*add_families)(TableBuilder& table) = nullptr;
  // Why it cannot run on this host although enabled (check-config says so:
  // the config stays valid); null when nothing here can stop it.
  std::optional<std::string> (*cannot_run_here)(const SamplerOptions& options) = nullptr;
  // Its snapshot carries this sample's block devices: sources after it in
  // the list, read in order, attribute their I/O to these.
  bool discovers_devices = false;
};

// A descriptor whose make and fields come from types: `Source` made by
// default construction, `kFields` its members of the Snapshot. The rest is
// the caller's designated initializer.
template <typename Source, auto... kFields>
constexpr SourceDescriptor Registered(SourceDescriptor descriptor) {
  descriptor.make = [] { return std::unique_ptr<SampleSource>(std::make_unique<Source>()); };
  descriptor.move_fields = SnapshotFields<kFields...>::Move;
  descriptor.copy_fields = SnapshotFields<kFields...>::Copy;
  return descriptor;
}

// The status of a collector whose files exist only where the kernel has the
// feature (md, NVMe, ZFS): its items into `items`; kNotFound succeeds with
// none, its error saying `absent` and what was missing, since nothing is
// wrong to page on. Any other failure fails it, with the file.
template <typename Item>
CollectorStatus OptionalFeatureStatus(std::string name, std::string_view absent,
                                      Result<std::vector<Item>> read, std::vector<Item>& items) {
  CollectorStatus status{std::move(name), 0, true, 0, {}, {}};
  if (read) {
    items = std::move(*read);
    return status;
  }
  status.success = read.error().code == ErrorCode::kNotFound;
  status.error = read.error().ToString();
  if (status.success) status.error = std::string(absent) + ": " + status.error;
  return status;
}

}  // namespace iowatch::daemon
