// Each LVM thin pool's health from a sample (daemon/sources/thin_pool/): its
// mode, how full its data and metadata are, and its problems, read at this
// moment: a mode other than rw (out of data space, read-only, failed, its
// status unreadable: what IowatchThinPoolOutOfSpace fires on) and a
// needs_check flag; data or metadata at 80 % or more is a warning (the
// filling alerts fire at 90 % of data, 80 % of metadata), not a problem.
// `iowatch health` shows it on the pool's dm device, as an md array's.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/sampling/snapshot.h"

namespace iowatch::daemon {

// At or above this share of data or metadata used, a pool is worth a look.
inline constexpr double kThinPoolWarnPercent = 80;

struct ThinPoolHealth {
  std::string pool;    // the dm name
  std::string device;  // dm-N, "" when sysfs did not name it
  std::string mode;    // rw, ro, out_of_data_space, fail, error
  std::optional<uint64_t> data_bytes;
  std::optional<double> data_used_percent;
  std::optional<uint64_t> metadata_bytes;
  std::optional<double> metadata_used_percent;
  bool needs_check = false;
  bool error_if_no_space = false;
  std::vector<std::string> warnings;  // data or metadata at kThinPoolWarnPercent or more
  std::vector<std::string> problems;
};

// The sample's pools, in dmsetup's order.
std::vector<ThinPoolHealth> BuildThinPoolHealth(const Snapshot& s);

// "66.3 GB", "201.3 MB": a pool's space as health and the status page print it.
std::string ThinPoolSizeText(uint64_t bytes);

// "rw, data 31 % of 66.3 GB, metadata 0 % of 201.3 MB" — one line of state.
std::string DescribeThinPool(const ThinPoolHealth& pool);

}  // namespace iowatch::daemon
