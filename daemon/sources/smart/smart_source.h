// The smart source: device health from smartctl (collectors/smart/), for
// every whole disk of the sample that can have any (dm, md, loop, zram, ram
// and nbd devices have none of their own), every collectors.smart.interval.
// A run is started and left to itself (collectors/smart/smartctl_run.h): each
// sample takes what has finished, so a disk that takes 30 s to answer, or
// never does, delays no sample; a run older than the timeout is killed with
// its process group, and kept until it dies (one stuck in the kernel on a
// hung disk dies when its ioctl returns): no other run starts on its disk
// until then, and it counts against the 4 at once.
// `-n standby` leaves a sleeping disk asleep (its last report stays). At
// most 4 runs go at once; the other disks' turns come as they finish. A disk
// smartctl has no SMART for (no device type fits, as a virtio disk; or its
// device does not open) is not asked again while it is present: its answer
// stands (a disk that goes and comes back is asked anew).
// Reports the collector "smart": it fails, with the first disk's cause, when
// no disk gave its health (smartctl missing, no privilege, no SMART on this
// hardware: a virtio disk says "Unable to detect device type"). Figures
// smartctl gave out of their range are left out and are its parse errors
// (counted, the first named).
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include <cstddef>
#include <string_view>

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& SmartSourceDescriptor();

// Its settings (daemon/sources/smart/iowatch.yaml documents them), here for
// the commands that run it themselves (iowatch health).
inline constexpr auto kSmartEnabled = config::BoolSetting("collectors.smart.enabled", "true");
inline constexpr auto kSmartInterval =
    config::DurationSetting("collectors.smart.interval", "10m", 1000);
inline constexpr auto kSmartTimeout =
    config::DurationSetting("collectors.smart.timeout", "1m", 1000);

// Seconds after a disk is first seen that its first run is due: 0 for the
// first kSmartImmediateDisks of a host (in name order, `rank`), so a host of
// a few disks has their health at once; the others' spread over the
// interval by a hash of the name, so 1,000 disks do not start 1,000 runs in
// the first minutes (a run every interval / disks seconds, the pace every
// later interval has).
inline constexpr size_t kSmartImmediateDisks = 16;
double FirstSmartRunDelay(std::string_view device, size_t rank, double interval_seconds);

// The families it renders (smart_families.cc).
void AddSmartFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
