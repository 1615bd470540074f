// Opening what a probe job reads and writes, safely. A regular file is
// created by iowatch (marked with the extended attribute user.iowatch.probe),
// preallocated and filled once with incompressible data before any read, so
// reads never hit unwritten extents; it is reused while it is large enough
// and extended (and filled) when it is not. iowatch never writes to a file it
// did not create, nor to a block device, unless TargetPolicy allows it, and
// the runner never leaves [region_offset, region_offset + region_size).
// Direct-I/O alignment comes from statx(STATX_DIOALIGN) where the kernel
// reports it, else the device's logical block size; a bs, offset or size
// that is not a multiple of it is an error naming the required alignment.
// Errors are specific: a filesystem without O_DIRECT (tmpfs) names the path
// and suggests --direct=0; a block device without --allow-block-device says
// so; no space while filling says how much was needed.
// The marker (how many bytes from the start of the file are known to hold
// data) and the fill are probe_file_layout.h's.
// Thread-safety: PreparedTarget owns its descriptor; one owner.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>

#include "common/result.h"
#include "probes/spec/job_spec.h"

namespace iowatch::probes {

struct TargetPolicy {
  bool allow_block_device = false;  // --allow-block-device: may read a block device
  bool destructive = false;         // --destructive: may also write it, or a foreign file
  // Where a file's device's logical block size is read when statx cannot
  // tell the direct-I/O alignment (--path.sysfs).
  std::filesystem::path sysfs = "/sys";
};

class PreparedTarget {
 public:
  PreparedTarget() = default;
  PreparedTarget(PreparedTarget&& other) noexcept;
  PreparedTarget& operator=(PreparedTarget&& other) noexcept;
  PreparedTarget(const PreparedTarget&) = delete;
  PreparedTarget& operator=(const PreparedTarget&) = delete;
  ~PreparedTarget();

  int fd = -1;  // opened O_RDWR or O_RDONLY (+ O_DIRECT when direct=1)
  std::string path;
  bool is_block_device = false;
  bool created = false;              // this call created the file
  uint64_t region_offset = 0;        // the job's offset
  uint64_t region_size = 0;          // bytes from region_offset the job may touch
  uint32_t memory_alignment = 4096;  // buffer address alignment
  uint32_t offset_alignment = 512;   // offset and length alignment (1 when direct=0)
  dev_t device = 0;                  // the block device holding the data (st_dev or st_rdev)
};

// Opens (and for files, creates/extends/fills) the target of `spec`. `cancel`
// set during a fill ends it early (os_errno ECANCELED); what was written is
// kept for the next run.
Result<PreparedTarget> PrepareTarget(const JobSpec& spec, const TargetPolicy& policy,
                                     const std::atomic<bool>* cancel = nullptr);

// kUnsupported (message suggesting --direct=0) when files in `directory`
// cannot do meaningful direct I/O: tmpfs (which accepts O_DIRECT from Linux
// 6.6 on but serves it from memory) or a filesystem refusing O_DIRECT. Asks
// through an unnamed O_TMPFILE inode, so nothing is left behind; where
// O_TMPFILE is unsupported it cannot tell and returns success.
Status CheckFilesystemAllowsDirectIo(const std::string& directory);

}  // namespace iowatch::probes
