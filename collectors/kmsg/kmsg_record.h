// The kernel log as /dev/kmsg hands it out (Documentation/ABI/testing/
// dev-kmsg): one record per read(), "PRIO,SEQ,USEC,FLAGS[,…];TEXT\n" then
// " KEY=VALUE" lines for the device it concerns; and the block layer's
// request errors in it. blk_print_req_error() writes "<kind> error, dev
// <name>, sector <n> op 0x<op>:(<OP>) flags …" (5.x and 6.x; 5.3 to 5.17
// prefixed "blk_update_request: "), kind being the blk_status name ("I/O",
// "critical medium", "timeout", "critical target", …; common/block_status.h),
// and the page cache adds "Buffer I/O error on dev <name>, logical block <n>,
// <what>" for the same failures: counted apart, never added to the request
// errors.
// Each parser matches its line whole, from its first character, with the
// kernel's own names in it (status, sense key, a disk name's characters):
// other kernel messages quote text a user chose (a mount option, a
// filesystem label, a USB product string), and a line that only contains an
// error line's text is not one. Whether the disk named exists is the
// caller's check (KernelDiskExists), where it has sysfs.
// Thread-safety: pure functions; KernelDiskExists reads sysfs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/file_tree.h"

namespace iowatch::collectors {

// Whether `name` can be a block device's kernel name ("sdb", "nvme0n1p2",
// "dm-3", "cciss/c0d0"): 1 to 31 letters, digits, '-', '_', '.', '/', the
// first a letter or digit.
bool IsKernelDiskName(std::string_view name);

// Whether the block device the kernel printed as `name` exists now
// (<sysfs>/class/block/<name> or <sysfs>/block/<name>, '/' written '!').
bool KernelDiskExists(const FileTree& sysfs, std::string_view name);

// Whether `key` is a sense key as the SCSI layer prints it: snstext[]'s
// names ("Medium Error", …), or "0x0" to "0xf" without CONFIG_SCSI_CONSTANTS.
bool IsScsiSenseKeyName(std::string_view key);

struct KmsgRecord {
  uint32_t priority = 0;  // facility * 8 + level
  uint64_t sequence = 0;  // increases by one per record since boot
  uint64_t usec = 0;      // monotonic time of the record
  std::string text;       // the message, \xHH escapes as the kernel wrote them
};

// One record's bytes; nullopt when they are not in /dev/kmsg's layout.
std::optional<KmsgRecord> ParseKmsgRecord(std::string_view bytes);

struct BlockIoError {
  std::string device;   // kernel name as printed ("sdb", "loop2", "nvme0n1")
  std::string op;       // "read", "write", "flush", "discard", … (lower case)
  std::string error;    // "I/O", "critical medium", "timeout", … ("buffer" for the page cache's)
  bool buffer = false;  // the page cache's "Buffer I/O error", not a request's
  bool operator==(const BlockIoError&) const = default;
};

// The block I/O error a message reports, or nullopt for any other message.
std::optional<BlockIoError> ParseBlockIoError(std::string_view text);

// The kernel's rate limit on those lines (printk_ratelimited: 10 per 5 s per
// call site): "blk_print_req_error: 12 callbacks suppressed" (print_req_error
// before 5.x), "buffer_io_error: 3 callbacks suppressed" for the page
// cache's, written when the next line passes.
struct SuppressedIoErrors {
  bool buffer = false;
  uint64_t count = 0;
  bool operator==(const SuppressedIoErrors&) const = default;
};

// The errors a message says were not logged, or nullopt for any other message.
std::optional<SuppressedIoErrors> ParseSuppressedIoErrors(std::string_view text);

// A filesystem the kernel shut down: every operation on it fails from then
// on, yet statfs still answers and the mount still reads "rw", so nothing
// but the log says so. XFS: "XFS (<dev>): <cause> detected at ….  Shutting
// down filesystem." (and before 5.x "… Detected.  Shutting down
// filesystem"); ext4: "EXT4-fs (<dev>): shut down requested (<how>)".
struct FilesystemShutdown {
  std::string fstype;  // "xfs", "ext4"
  std::string device;  // kernel name as printed ("sdb1", "dm-3")
  bool operator==(const FilesystemShutdown&) const = default;
};

// The shutdown a message reports, or nullopt for any other message.
std::optional<FilesystemShutdown> ParseFilesystemShutdown(std::string_view text);

// A SCSI command that ended with sense data, as the SCSI layer logs it
// (scsi_logging.c): "<driver> <h>:<c>:<t>:<l>: [<disk>] [tag#<n> ]Sense Key :
// <key> [current|deferred] [descriptor] ", the key being the SPC name
// ("Medium Error", "Hardware Error", "Aborted Command", "Not Ready", …) or
// "0x<k>".
// A failing SCSI disk says here what the block layer's line does not: a
// medium error from a hardware or transport one. Lines without a disk name
// (a device with no block disk, e.g. a changer) are not counted.
struct ScsiSense {
  std::string device;     // the disk's kernel name ("sdb", "sr0")
  std::string sense_key;  // as printed
  bool operator==(const ScsiSense&) const = default;
};

// The sense a message reports, or nullopt for any other message.
std::optional<ScsiSense> ParseScsiSense(std::string_view text);

}  // namespace iowatch::collectors
