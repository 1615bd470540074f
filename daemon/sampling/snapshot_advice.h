// `iowatch advise`'s findings for a sample's whole disks, as /metrics and the
// status page both show them: each disk's sysfs geometry and queue settings
// (read at discovery), its partitions, and its average request sizes since
// boot (its diskstats counters). Superblocks are not read (the hardened
// daemon opens no block device): no fs_stripe_mismatch here.
// Computed once per snapshot, by the first scrape or status page that asks.
// Thread-safety: safe from any thread (the snapshot's Memo).
#pragma once

#include <vector>

#include "collectors/advice/advice.h"
#include "daemon/sampling/snapshot.h"

namespace iowatch::daemon {

const std::vector<collectors::AdviceFinding>& SnapshotAdvice(const Snapshot& snapshot);

}  // namespace iowatch::daemon
