// The Prometheus view of a Snapshot: raw counters under node_exporter's
// names (iowatch_disk_*, iowatch_memory_*, iowatch_vmstat_*, iowatch_cpu_*),
// the derived iostat and vmstat series with their window maxima, device and
// md information, and the collectors' own health. docs/metrics.md lists
// every family this produces.
//
// The text is produced in pieces by a MetricsCursor, so that /metrics streams
// it to the client without ever holding all of it (4.4 MB for 1,000
// devices): the families form a table sorted by name, each knowing how many
// items (devices, CPUs, fields...) a snapshot has for it and how to write
// item i, and the cursor's position is just (family, part, item). Nothing is
// cached: a sample is taken every second and scraped every 15 s or so, so a
// snapshot is rarely rendered twice.
// Thread-safety: a cursor is used by one thread at a time; snapshots are
// immutable, and the family table is built once, thread-safely.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/sampling/snapshot.h"

namespace iowatch::daemon {

class MetricsCursor {
 public:
  // Holds the snapshot: a newer sample published mid-scrape changes nothing.
  explicit MetricsCursor(std::shared_ptr<const Snapshot> snapshot);

  // Appends whole samples to `out` until it has grown by `piece_bytes` or
  // more (by at most one item's lines past that), or the text ends. Returns
  // false once the text is complete; further calls append nothing.
  bool Next(std::string& out, size_t piece_bytes);

 private:
  std::shared_ptr<const Snapshot> snapshot_;
  size_t family_ = 0;  // position in the family table
  size_t part_ = 0;
  size_t item_ = 0;
  bool header_written_ = false;  // the current family's HELP and TYPE are out
};

// The whole text at once (tests, golden files).
std::string RenderSnapshot(const Snapshot& snapshot);

// Every family the renderer can produce, in output order.
std::vector<std::string_view> MetricFamilyNames();

}  // namespace iowatch::daemon
