// The ZFS pools' families: node_exporter's node_zfs_zpool_state and
// node_zfs_zpool_<kstat io field> under iowatch_zfs_pool_*, labelled `pool`,
// the io fields in base units (seconds, not the kstat's nanoseconds) and
// named as counters where they count.
#include <algorithm>
#include <string>

#include "collectors/zfs/zfs_pool.h"
#include "daemon/sources/zfs/zfs_source.h"

namespace iowatch::daemon {
namespace {

using collectors::ZfsPool;
using collectors::ZfsPoolIo;

size_t ZfsPools(const Snapshot& s) { return s.zfs.pools.size(); }

// Fields that count bytes, operations or queued I/Os, as they are.
constexpr FamilyRow<uint64_t ZfsPoolIo::*> kZfsCountRows[] = {
    {"iowatch_zfs_pool_read_bytes_total", "counter",
     "Bytes read from the pool (kstat io nread; node_exporter's node_zfs_zpool_nread).",
     &ZfsPoolIo::nread},
    {"iowatch_zfs_pool_written_bytes_total", "counter",
     "Bytes written to the pool (kstat io nwritten; node_exporter's node_zfs_zpool_nwritten).",
     &ZfsPoolIo::nwritten},
    {"iowatch_zfs_pool_reads_total", "counter",
     "Read operations (kstat io reads; node_exporter's node_zfs_zpool_reads).", &ZfsPoolIo::reads},
    {"iowatch_zfs_pool_writes_total", "counter",
     "Write operations (kstat io writes; node_exporter's node_zfs_zpool_writes).",
     &ZfsPoolIo::writes},
    {"iowatch_zfs_pool_waiting_ios", "gauge",
     "I/Os waiting now (kstat io wcnt; node_exporter's node_zfs_zpool_wcnt).", &ZfsPoolIo::wcnt},
    {"iowatch_zfs_pool_running_ios", "gauge",
     "I/Os in service now (kstat io rcnt; node_exporter's node_zfs_zpool_rcnt).", &ZfsPoolIo::rcnt},
};

// Fields in nanoseconds, exported in seconds.
constexpr FamilyRow<uint64_t ZfsPoolIo::*> kZfsSecondsRows[] = {
    {"iowatch_zfs_pool_wait_time_seconds_total", "counter",
     "Time with at least one I/O waiting (kstat io wtime in seconds; node_exporter's "
     "node_zfs_zpool_wtime, in ns).",
     &ZfsPoolIo::wtime},
    {"iowatch_zfs_pool_wait_time_weighted_seconds_total", "counter",
     "Waiting I/Os x time (kstat io wlentime in seconds; node_exporter's "
     "node_zfs_zpool_wlentime, in ns).",
     &ZfsPoolIo::wlentime},
    {"iowatch_zfs_pool_run_time_seconds_total", "counter",
     "Time with at least one I/O in service (kstat io rtime in seconds; node_exporter's "
     "node_zfs_zpool_rtime, in ns).",
     &ZfsPoolIo::rtime},
    {"iowatch_zfs_pool_run_time_weighted_seconds_total", "counter",
     "I/Os in service x time (kstat io rlentime in seconds; node_exporter's "
     "node_zfs_zpool_rlentime, in ns).",
     &ZfsPoolIo::rlentime},
    {"iowatch_zfs_pool_wait_updated_seconds", "gauge",
     "When the wait queue last changed, on the kernel's monotonic clock (kstat io wupdate in "
     "seconds; node_exporter's node_zfs_zpool_wupdate, in ns).",
     &ZfsPoolIo::wupdate},
    {"iowatch_zfs_pool_run_updated_seconds", "gauge",
     "When the run queue last changed, on the kernel's monotonic clock (kstat io rupdate in "
     "seconds; node_exporter's node_zfs_zpool_rupdate, in ns).",
     &ZfsPoolIo::rupdate},
};

constexpr double kNanosecondsPerSecond = 1e9;

void ZfsCount(const Snapshot& s, size_t i, size_t arg, ExpositionWriter& w) {
  const ZfsPool& pool = s.zfs.pools[i];
  if (pool.io) w.SampleInt({{"pool", pool.name}}, (*pool.io).*kZfsCountRows[arg].value);
}

void ZfsSeconds(const Snapshot& s, size_t i, size_t arg, ExpositionWriter& w) {
  const ZfsPool& pool = s.zfs.pools[i];
  if (!pool.io) return;
  w.Sample({{"pool", pool.name}},
           static_cast<double>((*pool.io).*kZfsSecondsRows[arg].value) / kNanosecondsPerSecond);
}

// 1 for the pool's state, 0 for the others (node_exporter's seven); a state
// not among them is one more series at 1.
void ZfsPoolState(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const ZfsPool& pool = s.zfs.pools[i];
  if (!pool.state) return;
  const std::string state = collectors::NodeExporterZfsPoolState(pool);
  for (const std::string_view name : collectors::kNodeZfsPoolStates) {
    w.SampleInt({{"pool", pool.name}, {"state", name}}, state == name ? 1 : 0);
  }
  if (std::ranges::find(collectors::kNodeZfsPoolStates, state) ==
      std::end(collectors::kNodeZfsPoolStates)) {
    w.SampleInt({{"pool", pool.name}, {"state", state}}, 1);
  }
}

}  // namespace

void AddZfsFamilies(TableBuilder& t) {
  t.Add("iowatch_zfs_pool_state", "gauge",
        "1 for the pool's state (<procfs>/spl/kstat/zfs/<pool>/state, lowercased: online, "
        "degraded, faulted, offline, removed, unavail, suspended), 0 for the others "
        "(node_exporter's node_zfs_zpool_state).",
        {ZfsPools, ZfsPoolState});
  AddRowFamilies(t, kZfsCountRows, ZfsPools, ZfsCount);
  AddRowFamilies(t, kZfsSecondsRows, ZfsPools, ZfsSeconds);
}

}  // namespace iowatch::daemon
