// The layout of a probe file that iowatch created: its marker and its data.
// The marker says "iowatch created this file, and [0, filled_bytes) holds
// data". It lives in the extended attribute user.iowatch.probe (decimal
// text); on filesystems without user xattrs in a sidecar file
// "<path>.iowatch" holding "<filled> <st_dev> <st_ino>", which counts only
// when it proves ownership: a regular file (never a symlink), owned by this
// user, not writable by others, naming the marked file's device and inode
// (a sidecar planted beside a foreign file proves nothing). It is raised only after the data it
// vouches for is on disk (fdatasync), so a crash while filling leaves the
// old, smaller value and the next run refills.
// The data is pseudo-random (PortableRandom, fresh for every 1 MiB chunk):
// fallocate leaves extents unwritten, whose reads return zeros without
// touching the disk, and a repeated or compressible pattern could be
// deduplicated or compressed by the storage below.
// Thread-safety: functions on a descriptor the caller owns; no shared state.
// Two processes laying out the same file at once is not supported.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "common/result.h"
#include "probes/target/posix_file.h"

namespace iowatch::probes {

struct ProbeFileMarker {
  bool present = false;       // iowatch created the file
  uint64_t filled_bytes = 0;  // [0, filled_bytes) holds data
};

// The marker of the open regular file `fd` at `where`: absent when neither the
// attribute nor a sidecar that proves ownership exists; present with 0 filled
// bytes when its text is not a decimal number (refilling is safe). Errors
// other than "no such attribute" or "xattrs unsupported" are returned.
Result<ProbeFileMarker> ReadProbeFileMarker(int fd, const ProbeFilePath& where);

// Records `filled_bytes` in the attribute, or where the filesystem has no
// user xattrs in the sidecar (written beside, fsynced, renamed over).
Status WriteProbeFileMarker(int fd, const ProbeFilePath& where, uint64_t filled_bytes);

// "<path>.iowatch", where the marker lives without user xattrs.
std::string ProbeFileSidecarPath(const std::string& path);

// Grows the file to `required` bytes (preallocating, so ENOSPC comes before
// the time spent writing and the extent is allocated in one piece), fills
// [filled, required) (from `filled` rounded down to `alignment`, which is 1
// unless `fd` is O_DIRECT), makes it durable, drops it from the page cache
// and then records `required` in the marker. `fd` must be open for writing.
// No space (ENOSPC, EDQUOT) gives back what was preallocated and is an error
// naming the directory and `required`; the marker is left as it was.
// `cancel` set (a SIGINT, the daemon stopping) ends the fill between two
// 1 MiB chunks: what was written is made durable and recorded in the marker,
// and the error has os_errno ECANCELED.
Status LayOutProbeFile(int fd, const ProbeFilePath& where, uint64_t filled, uint64_t required,
                       uint32_t alignment, const std::atomic<bool>* cancel = nullptr);

}  // namespace iowatch::probes
