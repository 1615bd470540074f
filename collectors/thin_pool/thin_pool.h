// LVM thin pools (dm-thin's thin-pool target) as `dmsetup status --target
// thin-pool` and `dmsetup table --target thin-pool` print them: usage is not
// in sysfs, only in the target's status (kernel
// Documentation/admin-guide/device-mapper/thin-provisioning.rst). A status
// line:
//   NAME: START LEN thin-pool <transaction id> <used metadata blocks>/<total
//   metadata blocks> <used data blocks>/<total data blocks> <held metadata
//   root|-> ro|rw|out_of_data_space [no_]discard_passdown
//   [error|queue]_if_no_space needs_check|- [metadata_low_watermark]
// or with the params `Fail` (the pool failed) or `Error` (the kernel could
// not read its metadata). Older kernels stop earlier (no low watermark, no
// needs_check, the oldest not even the mode): the fields after the held root
// are read where present. A table line:
//   NAME: START LEN thin-pool <metadata dev> <data dev> <data block size in
//   512-byte sectors> <low water mark> [<#feature args> <args>...]
// Metadata blocks are 4096 bytes (THIN_METADATA_BLOCK_SIZE); data blocks are
// the table's data block size, so a pool's data bytes need both outputs.
// Lines of other targets (dmsetup without --target prints every device) are
// skipped; "No devices found" is no pools. A malformed thin-pool line fails
// the whole, naming its line and what was expected.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch::collectors {

// dm-thin's metadata block size (drivers/md/dm-thin-metadata.h).
inline constexpr uint64_t kThinMetadataBlockBytes = 4096;
inline constexpr uint64_t kThinSectorBytes = 512;

// The pool's mode as its status says it: the three words of a live pool,
// and the two params of one the kernel cannot report on.
enum class ThinPoolMode { kRw, kRo, kOutOfDataSpace, kFail, kError };

// The modes' label values (iowatch_thin_pool_mode), in enum order.
inline constexpr std::string_view kThinPoolModeNames[] = {"rw", "ro", "out_of_data_space", "fail",
                                                          "error"};
std::string_view ThinPoolModeName(ThinPoolMode mode);

// The figures of a live pool's status (absent for Fail and Error).
struct ThinPoolUsage {
  uint64_t transaction_id = 0;
  uint64_t used_metadata_blocks = 0;
  uint64_t total_metadata_blocks = 0;
  uint64_t used_data_blocks = 0;  // in the table's data blocks
  uint64_t total_data_blocks = 0;
  std::optional<uint64_t> held_metadata_root{};  // "-": none held
  // Fields newer kernels add, absent where the line stops before them.
  std::optional<bool> discard_passdown{};
  std::optional<bool> error_if_no_space{};  // true: writes fail when full, rather than queue
  std::optional<bool> needs_check{};        // the metadata needs thin_check
  std::optional<uint64_t> metadata_low_watermark{};
  bool operator==(const ThinPoolUsage&) const = default;
};

struct ThinPoolStatus {
  std::string name;  // the dm name, as printed ("rootvg-docker--pool")
  uint64_t start_sector = 0;
  uint64_t length_sectors = 0;
  ThinPoolMode mode = ThinPoolMode::kRw;  // rw where an old kernel prints no mode
  std::optional<ThinPoolUsage> usage{};   // none for Fail and Error
  bool operator==(const ThinPoolStatus&) const = default;
};

struct ThinPoolTable {
  std::string name{};
  uint64_t start_sector = 0;
  uint64_t length_sectors = 0;
  std::string metadata_device{};  // "253:1"
  std::string data_device{};
  uint64_t data_block_sectors = 0;
  uint64_t low_water_mark_blocks = 0;
  std::vector<std::string> features{};  // "skip_block_zeroing", "error_if_no_space", …
  bool operator==(const ThinPoolTable&) const = default;
};

// A pool as the source exports it: its status joined to its table by name.
struct ThinPool {
  std::string name{};
  std::string device{};  // its kernel name ("dm-3") where sysfs says it; "" otherwise
  ThinPoolStatus status{};
  std::optional<ThinPoolTable> table{};  // none when the table run did not list it
  // Bytes, from the blocks and the table's block size (data) or 4096 (metadata).
  std::optional<uint64_t> DataBytes() const;
  std::optional<uint64_t> DataUsedBytes() const;
  std::optional<uint64_t> MetadataBytes() const;
  std::optional<uint64_t> MetadataUsedBytes() const;
  bool operator==(const ThinPool&) const = default;
};

// `dmsetup status` output; `path` names it in errors ("dmsetup status").
Result<std::vector<ThinPoolStatus>> ParseThinPoolStatus(std::string_view text,
                                                        std::string_view path);

// `dmsetup table` output.
Result<std::vector<ThinPoolTable>> ParseThinPoolTable(std::string_view text, std::string_view path);

// Each status with its table (by name), in the status's order, `device`
// left empty.
std::vector<ThinPool> JoinThinPools(std::vector<ThinPoolStatus> statuses,
                                    std::vector<ThinPoolTable> tables);

}  // namespace iowatch::collectors
