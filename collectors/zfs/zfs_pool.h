// ZFS pools' kstats under <procfs>/spl/kstat/zfs/<pool>/ (OpenZFS's SPL):
// `state`, the pool's state as one word (spa_state_to_name: ONLINE,
// DEGRADED, FAULTED, OFFLINE, REMOVED, UNAVAIL, SUSPENDED), and `io`, a
// KSTAT_TYPE_IO kstat, e.g.
//   12 3 0x00 1 80 79205351707403 395818011156865
//   nread    nwritten reads    writes   wtime    wlentime wupdate  rtime ...
//   1884160  3206144  22       132      7155162  104112268 79210489694949 ...
// a header (kid, type, flags, ndata, data size, creation and snapshot
// times), the kstat_io_t fields' names, then their values. A pool may have
// either file without the other (a suspended pool keeps only its state).
// NodeExporterZfsPoolState gives node_exporter's zfs collector's reading of
// the state (collector/zfs_linux.go).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::collectors {

// kstat_io_t (include/sys/kstat.h of the SPL): bytes, operations, and
// nanosecond sums of the wait (queued) and run (in service) queues.
struct ZfsPoolIo {
  uint64_t nread = 0;     // bytes read
  uint64_t nwritten = 0;  // bytes written
  uint64_t reads = 0;     // read operations
  uint64_t writes = 0;    // write operations
  uint64_t wtime = 0;     // ns with at least one I/O waiting
  uint64_t wlentime = 0;  // sum of waiting I/Os x ns
  uint64_t wupdate = 0;   // hrtime (ns) of the wait queue's last change
  uint64_t rtime = 0;     // ns with at least one I/O in service
  uint64_t rlentime = 0;  // sum of I/Os in service x ns
  uint64_t rupdate = 0;   // hrtime (ns) of the run queue's last change
  uint64_t wcnt = 0;      // I/Os waiting now
  uint64_t rcnt = 0;      // I/Os in service now
  bool operator==(const ZfsPoolIo&) const = default;
};

// The io file's field names in the order the SPL prints them, each with its
// member: parsers, exporters and tests walk this one list.
struct ZfsPoolIoField {
  std::string_view name;
  uint64_t ZfsPoolIo::*value;
};
inline constexpr ZfsPoolIoField kZfsPoolIoFields[] = {
    {"nread", &ZfsPoolIo::nread},       {"nwritten", &ZfsPoolIo::nwritten},
    {"reads", &ZfsPoolIo::reads},       {"writes", &ZfsPoolIo::writes},
    {"wtime", &ZfsPoolIo::wtime},       {"wlentime", &ZfsPoolIo::wlentime},
    {"wupdate", &ZfsPoolIo::wupdate},   {"rtime", &ZfsPoolIo::rtime},
    {"rlentime", &ZfsPoolIo::rlentime}, {"rupdate", &ZfsPoolIo::rupdate},
    {"wcnt", &ZfsPoolIo::wcnt},         {"rcnt", &ZfsPoolIo::rcnt},
};

struct ZfsPool {
  std::string name{};
  std::optional<std::string> state{};  // as written: "ONLINE"
  std::optional<ZfsPoolIo> io{};
  bool operator==(const ZfsPool&) const = default;
};

// The io kstat's text; fails with path:line and what was expected on a
// header that is not 7 fields, a names line without every kstat_io_t
// field, or a values line that is not one decimal number per name.
// Names beyond the twelve are read and ignored.
Result<ZfsPoolIo> ParseZfsPoolIo(std::string_view text, std::string_view path);

// The state kstat's text: its one word; an empty file fails naming line 1.
Result<std::string> ParseZfsPoolState(std::string_view text, std::string_view path);

// Every pool directory of <procfs>/spl/kstat/zfs, by name, with the files it
// has; one exported while read (neither file left) is left out. No
// spl/kstat/zfs (no ZFS module loaded) is kNotFound; a malformed file fails
// the whole, naming it.
Result<std::vector<ZfsPool>> ReadZfsPools(const FileTree& procfs);

// node_zfs_zpool_state's labels, in node_exporter's order.
inline constexpr std::string_view kNodeZfsPoolStates[] = {
    "online", "degraded", "faulted", "offline", "removed", "unavail", "suspended"};

// The pool's state lowercased, as node_exporter compares it with those
// labels; "" when the pool has no state file.
std::string NodeExporterZfsPoolState(const ZfsPool& pool);

}  // namespace iowatch::collectors
