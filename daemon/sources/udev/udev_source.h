// UdevSource: what udev knows of each block device iowatch exports (the
// disk source's devices: its device selection, partitions when they are
// exported), from its database entry <udev data>/b<major>:<minor>
// (collectors/udev/udev_data.h; paths.udev_data, --path.udev.data). Reports
// the collector "udev". The entries are read again when the devices come
// and go, and every minute otherwise: udev rewrites one only on an event (a
// new filesystem, a dm table loaded), and a read per device per second is
// what made node_exporter's diskstats ten times slower on hosts with
// thousands of devices. No database (a container without udev) and a
// device without an entry are not failures: those devices have no series.
// A malformed property line is skipped and counted
// (iowatch_collector_parse_errors_total); an entry that cannot be read
// fails the collector, with its path, and the other devices are read.
// The multipath maps among the devices (udev's DM_UUID "mpath-…") are the
// collector "multipath": their paths (<sysfs>/block/<dm>/slaves/) and each
// path's state (collectors/udev/multipath.h), read every sample, since a
// path fails without an event on the map's entry.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& UdevSourceDescriptor();

// The families it renders (udev_families.cc).
void AddUdevFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
