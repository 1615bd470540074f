// `iowatch advise`'s findings for a sample's whole disks, as /metrics and the
// status page both show them: each disk's sysfs geometry and queue settings
// (read at discovery), its partitions, and what it received: with the bpf
// collector on, its request statistics since the program was loaded (exact
// average sizes, the shares of writes below the full stripe and not
// aligned), else its average request sizes since boot (diskstats). Superblocks are not read (the
// hardened daemon opens no block device): no fs_stripe_mismatch here. Computed once per snapshot,
// by the first scrape or status page that asks. Thread-safety: safe from any thread (the snapshot's
// Memo).
#pragma once

#include <vector>

#include "advice/advice.h"
#include "daemon/sampling/snapshot.h"

namespace iowatch::daemon {

const std::vector<advice::AdviceFinding>& SnapshotAdvice(const Snapshot& snapshot);

}  // namespace iowatch::daemon
