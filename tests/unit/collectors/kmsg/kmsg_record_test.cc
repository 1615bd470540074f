// /dev/kmsg's records and the block layer's error lines in them, as 5.x and
// 6.x kernels print them (the texts are this VM's, kernel 6.18, and
// blk_print_req_error's and buffer_io_error's formats).
#include "collectors/kmsg/kmsg_record.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace iowatch::collectors {
namespace {

TEST(KmsgRecord, HeaderTextAndNothingOfTheDictionary) {
  const auto r = ParseKmsgRecord(
      "3,692,9903967968,-;I/O error, dev loop2, sector 5866 op 0x0:(READ) flags 0x8800 "
      "phys_seg 1 prio class 2\n SUBSYSTEM=block\n DEVICE=+block:7:2\n");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->priority, 3u);
  EXPECT_EQ(r->sequence, 692u);
  EXPECT_EQ(r->usec, 9903967968u);
  EXPECT_EQ(r->text,
            "I/O error, dev loop2, sector 5866 op 0x0:(READ) flags 0x8800 phys_seg 1 prio class 2");
  // Fields a newer kernel appends after the flags are passed over.
  EXPECT_EQ(ParseKmsgRecord("6,1,2,-,caller=T1;text\n")->text, "text");
}

TEST(KmsgRecord, NotALogRecord) {
  EXPECT_FALSE(ParseKmsgRecord("").has_value());
  EXPECT_FALSE(ParseKmsgRecord("no header at all\n").has_value());
  EXPECT_FALSE(ParseKmsgRecord("3,x,1,-;text\n").has_value());
  EXPECT_FALSE(ParseKmsgRecord("3,1;text\n").has_value());
}

TEST(BlockIoError, RequestErrorsOfEveryKindAndOp) {
  EXPECT_EQ(ParseBlockIoError("I/O error, dev loop2, sector 5866 op 0x0:(READ) flags 0x8800 "
                              "phys_seg 1 prio class 2"),
            (BlockIoError{"loop2", "read", "I/O", false}));
  EXPECT_EQ(ParseBlockIoError("critical medium error, dev sdb, sector 1234 op 0x1:(WRITE) flags "
                              "0x0 phys_seg 1 prio class 0"),
            (BlockIoError{"sdb", "write", "critical medium", false}));
  EXPECT_EQ(ParseBlockIoError("timeout error, dev nvme0n1, sector 0 op 0x2:(FLUSH) flags 0x800"),
            (BlockIoError{"nvme0n1", "flush", "timeout", false}));
  // mkfs.ext4 zeroing its journal on a loop device over tmpfs (this VM, 6.18).
  EXPECT_EQ(ParseBlockIoError("operation not supported error, dev loop0, sector 262016 op "
                              "0x9:(WRITE_ZEROES) flags 0x20000800 phys_seg 0 prio class 2"),
            (BlockIoError{"loop0", "write_zeroes", "operation not supported", false}));
  // 5.3 to 5.17 prefixed the caller.
  EXPECT_EQ(ParseBlockIoError("blk_update_request: I/O error, dev sda, sector 8 op "
                              "0x3:(DISCARD) flags 0x0 phys_seg 1 prio class 0"),
            (BlockIoError{"sda", "discard", "I/O", false}));
}

TEST(BlockIoError, BufferErrorsApart) {
  EXPECT_EQ(ParseBlockIoError("Buffer I/O error on dev loop2, logical block 0, async page read"),
            (BlockIoError{"loop2", "read", "buffer", true}));
  EXPECT_EQ(
      ParseBlockIoError("Buffer I/O error on dev sdb1, logical block 12, lost async page write"),
      (BlockIoError{"sdb1", "write", "buffer", true}));
}

TEST(BlockIoError, OtherMessagesAreNotErrors) {
  EXPECT_FALSE(ParseBlockIoError("loop3: detected capacity change from 0 to 32768"));
  EXPECT_FALSE(ParseBlockIoError("EXT4-fs error (device loop0): trigger_test_error:129: hi"));
  EXPECT_FALSE(ParseBlockIoError("I/O error, dev loop2"));                // cut short
  EXPECT_FALSE(ParseBlockIoError("my app: I/O error, dev x, sector y"));  // no op
  EXPECT_FALSE(ParseBlockIoError("Buffer I/O error on dev loop2, logical block 0, something"));
}

TEST(SuppressedIoErrors, TheRateLimitsReportsOfItsErrorLines) {
  EXPECT_EQ(ParseSuppressedIoErrors("blk_print_req_error: 12 callbacks suppressed"),
            (SuppressedIoErrors{false, 12}));
  EXPECT_EQ(ParseSuppressedIoErrors("print_req_error: 3 callbacks suppressed"),  // 4.x
            (SuppressedIoErrors{false, 3}));
  EXPECT_EQ(ParseSuppressedIoErrors("buffer_io_error: 7 callbacks suppressed"),
            (SuppressedIoErrors{true, 7}));
  // Other call sites' limits, and lines that only look like it.
  EXPECT_FALSE(ParseSuppressedIoErrors("ext4_end_bio: 5 callbacks suppressed"));
  EXPECT_FALSE(ParseSuppressedIoErrors("blk_print_req_error: many callbacks suppressed"));
  EXPECT_FALSE(ParseSuppressedIoErrors("blk_print_req_error: 5 callbacks suppressed!"));
  EXPECT_FALSE(ParseSuppressedIoErrors("blk_print_req_error:  callbacks suppressed"));
  EXPECT_FALSE(
      ParseSuppressedIoErrors("blk_print_req_error: 99999999999999999999 callbacks "
                              "suppressed"));  // over 64 bits
}

TEST(FilesystemShutdown, XfsAndExt4AsTheirKernelsSayIt) {
  // 6.x, as this VM's kernel printed it after `xfs_io -x -c shutdown`.
  EXPECT_EQ(ParseFilesystemShutdown("XFS (loop0): Log I/O Error (0x6) detected at "
                                    "xfs_fs_goingdown+0x63/0xb0 (fs/xfs/xfs_fsops.c:475).  "
                                    "Shutting down filesystem."),
            (FilesystemShutdown{"xfs", "loop0"}));
  // 4.x.
  EXPECT_EQ(ParseFilesystemShutdown("XFS (dm-3): I/O Error Detected. Shutting down filesystem"),
            (FilesystemShutdown{"xfs", "dm-3"}));
  EXPECT_EQ(ParseFilesystemShutdown("EXT4-fs (sdb1): shut down requested (2)"),
            (FilesystemShutdown{"ext4", "sdb1"}));
  // The lines around a shutdown, and others of the same filesystems, are not one.
  for (const char* other :
       {"XFS (loop0): User initiated shutdown received.",
        "XFS (loop0): Please unmount the filesystem and rectify the problem(s)",
        "XFS (loop0): Mounting V5 Filesystem 0bafb948",
        "EXT4-fs (loop0): Remounting filesystem read-only", "XFS (): Shutting down filesystem",
        "XFS loop0 Shutting down filesystem"}) {
    EXPECT_FALSE(ParseFilesystemShutdown(other)) << other;
  }
}

TEST(ScsiSense, TheSenseKeyOfEachFormat) {
  // scsi_print_sense() of a failed command (5.x and 6.x: with its tag).
  EXPECT_EQ(ParseScsiSense("sd 2:0:0:0: [sdb] tag#18 Sense Key : Medium Error [current] "
                           "[descriptor] "),
            (ScsiSense{"sdb", "Medium Error"}));
  EXPECT_EQ(ParseScsiSense("sd 0:0:1:0: [sdc] tag#0 Sense Key : Aborted Command [current] "),
            (ScsiSense{"sdc", "Aborted Command"}));
  EXPECT_EQ(ParseScsiSense("sd 4:0:0:0: [sde] tag#7 Sense Key : Hardware Error [deferred] "),
            (ScsiSense{"sde", "Hardware Error"}));
  // sd's own commands (cache sync, start/stop): no tag.
  EXPECT_EQ(ParseScsiSense("sd 0:0:0:0: [sda] Sense Key : Not Ready [current] "),
            (ScsiSense{"sda", "Not Ready"}));
  // Before 3.19: a second space where the tag is now.
  EXPECT_EQ(ParseScsiSense("sd 6:0:0:0: [sdf]  Sense Key : Unit Attention [current]"),
            (ScsiSense{"sdf", "Unit Attention"}));
  // A key without an SPC name, and a CD drive.
  EXPECT_EQ(ParseScsiSense("sd 1:0:0:0: [sdb] tag#2 Sense Key : 0xf [current] "),
            (ScsiSense{"sdb", "0xf"}));
  EXPECT_EQ(ParseScsiSense("sr 1:0:0:0: [sr0] tag#0 Sense Key : Illegal Request [current] "),
            (ScsiSense{"sr0", "Illegal Request"}));
}

TEST(ScsiSense, TheLinesAroundItAndLookAlikesAreNot) {
  for (const char* other : {
           // The other lines of the same failure.
           "sd 2:0:0:0: [sdb] tag#18 FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_OK "
           "cmd_age=3s",
           "sd 2:0:0:0: [sdb] tag#18 Add. Sense: Unrecovered read error - auto reallocate failed",
           "sd 2:0:0:0: [sdb] tag#18 CDB: Read(10) 28 00 00 00 08 00 00 00 08 00",
           // No disk name, a bad tag, an unterminated state, not a SCSI device's line.
           "sd 0:0:0:0: Sense Key : Medium Error [current] ",
           "sd 2:0:0:0: [sdb] tag#x Sense Key : Medium Error [current] ",
           "sd 2:0:0:0: [sdb] tag#1 Sense Key : Medium Error [curr",
           "sd 2:0:0:0: [sdb] tag#1 Sense Key :  [current] ",
           "[sdb] Sense Key : Medium Error [current] ",
           "myapp: [x] Sense Key : Medium Error [current] ",
       }) {
    EXPECT_FALSE(ParseScsiSense(other)) << other;
  }
}

// Kernel messages that quote text a user or a device chose, with an error
// line's text in it: none is an error line. The overlayfs ones are this VM's
// (kernel 6.18) after an unprivileged `unshare -Urm mount -t overlay overlay
// -o 'lowerdir=<text>' DIR`; the btrfs one is 6.1's scan message with the
// label set by `mkfs.btrfs -L`; the USB one, a device's product string.
constexpr const char* kForgedRequestErrors[] = {
    "overlayfs: failed to resolve '/x error, dev sda, sector 1 op 0x0:(READ) flags 0x0 "
    "phys_seg 1 prio class 0': -2",
    "BTRFS: device label I/O error, dev sda, sector 1 op 0x0:(READ) flags 0x0 phys_seg 1 prio "
    "class 0 devid 1 transid 6 /dev/loop0 scanned by mount (812)",
    "usb 1-1: Product: I/O error, dev sda, sector 1 op 0x0:(READ)",
    // Whole lines, but with a kind the kernel has no status for.
    "disk on fire error, dev sda, sector 1 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0",
    "i/o error, dev sda, sector 1 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0",
    // A device name no kernel gives, a sector or op not in the format, text after it.
    "I/O error, dev s da, sector 1 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0",
    "I/O error, dev ../sda, sector 1 op 0x0:(READ) flags 0x0",
    "I/O error, dev sda, sector -1 op 0x0:(READ) flags 0x0",
    "I/O error, dev sda, sector 1 op 0x0:(read) flags 0x0",
    "I/O error, dev sda, sector 1 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0 (user)",
    "I/O error, dev sda, sector 1 op 0x0:(READ)': -2",
    "blk_update_request: blk_update_request: I/O error, dev sda, sector 1 op 0x0:(READ)",
};

TEST(BlockIoError, TextQuotingAnErrorLineIsNotOne) {
  for (const char* forged : kForgedRequestErrors) {
    EXPECT_FALSE(ParseBlockIoError(forged)) << forged;
  }
  for (const char* forged : {
           "overlayfs: failed to resolve 'Buffer I/O error on dev sda, logical block 0, async "
           "page read': -2",
           "Buffer I/O error on dev sda, logical block 0, async page read': -2",
           "Buffer I/O error on dev sda, logical block x, async page read",
           "Buffer I/O error on dev s a, logical block 0, async page read",
       }) {
    EXPECT_FALSE(ParseBlockIoError(forged)) << forged;
  }
}

TEST(BlockIoError, EveryKindTheKernelNamesAndNoOther) {
  for (const char* kind :
       {"operation not supported", "timeout", "critical space allocation", "recoverable transport",
        "critical target", "critical nexus", "reservation conflict", "critical medium",
        "protection", "kernel resource", "device resource", "I/O", "device offline",
        "nonblocking retry", "dm internal retry", "open zones exceeded", "active zones exceeded",
        "duration limit exceeded", "invalid"}) {
    const auto e = ParseBlockIoError(std::string(kind) +
                                     " error, dev sdb, sector 9 op 0x9:(WRITE_ZEROES) flags 0x800 "
                                     "phys_seg 0 prio class 0");
    ASSERT_TRUE(e) << kind;
    EXPECT_EQ(e->error, kind);
    EXPECT_EQ(e->op, "write_zeroes");
  }
}

TEST(FilesystemShutdown, TextQuotingAShutdownIsNotOne) {
  for (const char* forged : {
           "overlayfs: failed to resolve 'XFS (sda1): Metadata I/O Error (0x1) detected at "
           "x+0x1/0x2 (fs/xfs/x.c:1).  Shutting down filesystem.': -2",
           "XFS (sda1): Metadata I/O Error (0x1) detected at x+0x1/0x2 (fs/xfs/x.c:1).  "
           "Shutting down filesystem.': -2",
           "XFS (sda1): unknown mount option [Shutting down filesystem].",
           "XFS (sda1): I/O Error Detected. Shutting down filesystem (not)",
           "EXT4-fs (sda1): shut down requested (2)': -2",
           "EXT4-fs (sda1): shut down requested (by me)",
           "EXT4-fs (a b): shut down requested (2)",
       }) {
    EXPECT_FALSE(ParseFilesystemShutdown(forged)) << forged;
  }
  // 4.x's other sentences, and 6.x's other reasons.
  EXPECT_EQ(ParseFilesystemShutdown("XFS (sdb1): Corruption of in-memory data detected.  "
                                    "Shutting down filesystem"),
            (FilesystemShutdown{"xfs", "sdb1"}));
  EXPECT_EQ(ParseFilesystemShutdown("XFS (nvme0n1p2): Corruption of on-disk metadata (0x4) "
                                    "detected at xfs_btree_lookup+0x1f/0x4a0 [xfs] "
                                    "(fs/xfs/libxfs/xfs_btree.c:2012).  Shutting down filesystem."),
            (FilesystemShutdown{"xfs", "nvme0n1p2"}));  // xfs a module: " [xfs]"
}

TEST(ScsiSense, TextQuotingASenseLineIsNotOne) {
  for (const char* forged : {
           // This VM's overlayfs line quoting a whole sense line.
           "overlayfs: failed to resolve 'sd 2:0:0:0: [vda] tag#1 Sense Key : Medium Error "
           "[current]': -2",
           "usb 1-1: Product: [sdb] Sense Key : Medium Error [current]",
           // Not <driver> <h>:<c>:<t>:<l>, a key the kernel has no name for, text after it.
           "sd 2:0:0: [sdb] tag#1 Sense Key : Medium Error [current] ",
           "sd 2:0:0:x: [sdb] tag#1 Sense Key : Medium Error [current] ",
           "Sd 2:0:0:0: [sdb] tag#1 Sense Key : Medium Error [current] ",
           "sd 2:0:0:0: [sdb] tag#1 Sense Key : Disk Melted [current] ",
           "sd 2:0:0:0: [sdb] tag#1 Sense Key : 0x10 [current] ",
           "sd 2:0:0:0: [sdb] tag#1 Sense Key : Medium Error [current]': -2",
           "sd 2:0:0:0: [s b] tag#1 Sense Key : Medium Error [current] ",
       }) {
    EXPECT_FALSE(ParseScsiSense(forged)) << forged;
  }
}

TEST(KernelNames, DisksSenseKeysAndWhatIsNot) {
  for (const char* name : {"sda", "nvme0n1p2", "dm-3", "md127", "loop0", "cciss/c0d0", "pmem0.1",
                           "mmcblk0boot0", "zram0"}) {
    EXPECT_TRUE(IsKernelDiskName(name)) << name;
  }
  for (const char* name :
       {"", "s da", "sda,", "-sda", "/x", "'sda", "(sda)", "a2345678901234567890123456789012"}) {
    EXPECT_FALSE(IsKernelDiskName(name)) << name;
  }
  EXPECT_TRUE(IsScsiSenseKeyName("Medium Error"));
  EXPECT_TRUE(IsScsiSenseKeyName("Vendor Specific(9)"));
  EXPECT_TRUE(IsScsiSenseKeyName("0xb"));
  EXPECT_FALSE(IsScsiSenseKeyName("0xB"));
  EXPECT_FALSE(IsScsiSenseKeyName("medium error"));
  EXPECT_FALSE(IsScsiSenseKeyName("Medium Error [current"));
}

TEST(KernelNames, ADiskExistsWhenSysfsListsIt) {
  const auto root =
      std::filesystem::temp_directory_path() / ("iowatch-kmsg-disks-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "class/block/sdb1");
  std::filesystem::create_directories(root / "class/block/cciss!c0d0");
  std::filesystem::create_directories(root / "block/vdb");  // a tree with no class/block entry
  const FileTree sysfs(root);
  EXPECT_TRUE(KernelDiskExists(sysfs, "sdb1"));
  EXPECT_TRUE(KernelDiskExists(sysfs, "cciss/c0d0"));  // sysfs writes '/' as '!'
  EXPECT_TRUE(KernelDiskExists(sysfs, "vdb"));
  EXPECT_FALSE(KernelDiskExists(sysfs, "sda"));
  EXPECT_FALSE(KernelDiskExists(sysfs, "."));
  EXPECT_FALSE(KernelDiskExists(sysfs, ""));
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace iowatch::collectors
