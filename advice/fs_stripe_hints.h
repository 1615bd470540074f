// The stripe geometry a filesystem was made for, from its superblock: ext4's
// s_raid_stride and s_raid_stripe_width (blocks; mke2fs -E stride=,
// stripe_width=), XFS's sb_unit and sb_width (blocks; mkfs.xfs -d su=,sw=).
// Read from the device holding the filesystem, read-only, the first 64 KiB
// (ext4's superblock is at 1024, XFS's at 0). Offsets: ext4
// (Documentation/filesystems/ext4/super.rst): magic 0xEF53 at 0x38,
// s_log_block_size 0x18, s_raid_stride 0x164 (le16), s_raid_stripe_width
// 0x170 (le32); XFS (xfs_format.h, struct xfs_dsb, big-endian): "XFSB" at 0,
// sb_blocksize 4, sb_unit 184, sb_width 188.
// Thread-safety: pure functions; ReadFsStripeHints reads the device.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "common/result.h"

namespace iowatch::advice {

struct FsStripeHints {
  std::string filesystem;     // "ext4" (also ext2/3: the same superblock) or "xfs"
  uint64_t block_size = 0;    // bytes
  uint64_t stripe_unit = 0;   // bytes: ext4 stride, XFS sunit; 0 = not set
  uint64_t stripe_width = 0;  // bytes: ext4 stripe_width, XFS swidth; 0 = not set
  bool operator==(const FsStripeHints&) const = default;
};

// nullopt when the bytes hold neither superblock (another filesystem, none).
std::optional<FsStripeHints> ParseFsStripeHints(std::span<const uint8_t> head);

inline constexpr size_t kSuperblockBytes = size_t{64} * 1024;

// Opens `device` read-only; errors: it cannot be opened or read.
Result<std::optional<FsStripeHints>> ReadFsStripeHints(const std::string& device);

}  // namespace iowatch::advice
