// The thin_pool source: LVM thin pools' data and metadata fill and mode, from
// `dmsetup status --target thin-pool` and `dmsetup table --target thin-pool`
// (collectors/thin_pool/), every collectors.thin_pool.interval. Usage is in
// no sysfs file: only the target's status says it (it needs CAP_SYS_ADMIN).
// Nothing is spawned on a host without a device-mapper device (no
// <sysfs>/block/dm-*): most hosts have none. The two runs are started and
// left to themselves (collectors/smart/smartctl_run.h, the class smartctl's
// runs use): each sample takes what has finished, so a dmsetup that waits on
// a suspended device delays no sample; runs older than the timeout are
// killed with their process groups, and kept until they die (no other run
// starts meanwhile). Each sample serves the last good result.
// Reports the collector "thin_pool": it succeeds with no pools where there is
// no dm device or no dmsetup (its status says which: nothing to page on), and
// fails with the cause when dmsetup exits non-zero (no privilege), did not
// answer in time, or printed what the parsers refuse (the line named).
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& ThinPoolSourceDescriptor();

// Its settings (daemon/sources/thin_pool/iowatch.yaml documents them).
inline constexpr auto kThinPoolEnabled =
    config::BoolSetting("collectors.thin_pool.enabled", "true");
inline constexpr auto kThinPoolInterval =
    config::DurationSetting("collectors.thin_pool.interval", "1m", 1000);
inline constexpr auto kThinPoolTimeout =
    config::DurationSetting("collectors.thin_pool.timeout", "30s", 1000);
inline constexpr auto kThinPoolDmsetup =
    config::PathSetting("collectors.thin_pool.dmsetup", "dmsetup");

// The families it renders (thin_pool_families.cc).
void AddThinPoolFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
