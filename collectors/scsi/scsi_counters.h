// A SCSI disk's own command counters, kept by the SCSI midlayer since the
// device was attached and shown in <sysfs>/block/<disk>/device/:
// iorequest_cnt (commands sent to the low-level driver), iodone_cnt (those
// completed), ioerr_cnt (completed with an error result: medium and
// transport errors, and benign ones such as the UNIT ATTENTION after a
// reset) and iotmo_cnt (timed out; absent before Linux 2.6.37). Each is
// printed "0x%llx" from a 32-bit atomic_t: a value past 2^31 prints sign-
// extended, and the count wraps at 2^32 (ScsiCounterExtender).
// Thread-safety: pure functions; ScsiCounterExtender is a value.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::collectors {

struct ScsiCounters {
  uint64_t requests = 0;  // each the counter's 32 bits
  uint64_t done = 0;
  uint64_t errors = 0;
  std::optional<uint64_t> timeouts;
  bool operator==(const ScsiCounters&) const = default;
};

// The counters of whole disk `disk` (kernel name); kNotFound when it has
// none (not a SCSI device), a parse error naming the file otherwise.
Result<ScsiCounters> ReadScsiCounters(const FileTree& sysfs, std::string_view disk);

// A 32-bit counter made a 64-bit one that never wraps: each reading adds its
// growth modulo 2^32 (read at least once per wrap: at 100,000 commands a
// second, every 11 hours).
class ScsiCounterExtender {
 public:
  uint64_t Extend(uint64_t raw32);

 private:
  std::optional<uint64_t> last_raw_;
  uint64_t total_ = 0;
};

}  // namespace iowatch::collectors
