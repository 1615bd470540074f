// The kmsg source's counts and their file: per (device, op, error) since
// boot, with the boot they belong to and the last record counted, as JSON
// ({"boot_id", "sequence", "errors": [{"device", "op", "error", "buffer",
// "count"}], "suppressed": {"request", "buffer"}, "shutdowns": [{"device",
// "fstype", "count"}], "senses": [{"device", "sense_key", "count"}]}),
// written whole (common/whole_file.h), replaced, never written through. "suppressed", "shutdowns"
// and "senses" may be absent (files written before them). Series whose names no kernel line has
// (an error kind, a sense key, a disk name) are dropped on reading. Thread-safety: a value; the
// file functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "daemon/sampling/snapshot.h"

namespace iowatch::daemon {

struct KmsgCounts {
  std::string boot_id;
  std::optional<uint64_t> sequence;   // the last record counted; none before the first
  std::vector<IoErrorSeries> errors;  // sorted by device, op, error
  // Lines the kernel's rate limit held back, as it reports them.
  uint64_t suppressed_requests = 0;
  uint64_t suppressed_buffers = 0;
  std::vector<FilesystemShutdownSeries> shutdowns;  // sorted by device, fstype
  std::vector<ScsiSenseSeries> senses;              // sorted by device, sense key

  // Adds one error to its series.
  void Add(const std::string& device, const std::string& op, const std::string& error, bool buffer);
  // Adds one shutdown of the device's filesystem.
  void AddShutdown(const std::string& device, const std::string& fstype);
  // Adds one SCSI sense report of the device.
  void AddSense(const std::string& device, const std::string& sense_key);
};

// The largest file ReadKmsgCounts reads: a series is about 100 bytes, and
// no machine's log names 10,000 of them.
inline constexpr size_t kMaxKmsgCountsBytes = 1 << 20;

std::string KmsgCountsJson(const KmsgCounts& counts);
// The file's counts, validated: a regular file (not a symlink) of at most
// kMaxKmsgCountsBytes, JSON no deeper than its entries, each field of its
// type, names of 1 to 256 bytes, the counts adding up to no more than the
// records up to its sequence. A series named twice is kept once, with the
// larger count. An error names the file and what was expected; kNotFound
// when there is none.
Result<KmsgCounts> ReadKmsgCounts(const std::string& path);

}  // namespace iowatch::daemon
