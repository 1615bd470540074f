#include "probes/target/probe_target.h"

#include <fcntl.h>
#include <linux/fs.h>     // BLKGETSIZE64, BLKSSZGET
#include <linux/magic.h>  // TMPFS_MAGIC
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/decimal.h"
#include "common/file_tree.h"
#include "probes/target/posix_file.h"
#include "probes/target/probe_file_layout.h"

namespace iowatch::probes {
namespace {

// What a device that reports nothing is assumed to need (the historical
// sector size).
constexpr uint32_t kDefaultLogicalBlockBytes = 512;

std::unexpected<Error> DirectIoUnsupported(std::string path) {
  return PathError(ErrorCode::kUnsupported,
                   "the filesystem does not support O_DIRECT (direct=1); use --direct=0 to measure "
                   "through the page cache",
                   std::move(path), EINVAL);
}

// tmpfs (Linux ≥ 6.6) accepts O_DIRECT but serves it from memory, so it
// would report memory speed as device speed.
std::unexpected<Error> DirectIoOnTmpfs(std::string path) {
  return PathError(ErrorCode::kUnsupported,
                   "the filesystem does not support O_DIRECT (direct=1): it is tmpfs, which keeps "
                   "files in memory; use --direct=0 to measure through the page cache",
                   std::move(path), EINVAL);
}

std::unexpected<Error> SymlinkRefused(std::string path) {
  return PathError(ErrorCode::kInvalidArgument,
                   "is a symbolic link; iowatch opens probe files only by their own name (give "
                   "the path it points to)",
                   std::move(path), ELOOP);
}

// Kernel interfaces that look like files: reading or writing one is a call
// into the kernel with side effects (/sys/.../delete, /proc/sys/vm/drop_caches),
// never a measurement of storage. Refused whatever the flags.
std::optional<std::string_view> PseudoFilesystemName(decltype(statfs::f_type) type) {
  struct Known {
    decltype(statfs::f_type) magic;
    std::string_view name;
  };
  static constexpr Known kPseudo[] = {
      {PROC_SUPER_MAGIC, "procfs"},
      {SYSFS_MAGIC, "sysfs"},
      {DEBUGFS_MAGIC, "debugfs"},
      {TRACEFS_MAGIC, "tracefs"},
      {CGROUP_SUPER_MAGIC, "cgroupfs"},
      {CGROUP2_SUPER_MAGIC, "cgroup2fs"},
      {SECURITYFS_MAGIC, "securityfs"},
      {SELINUX_MAGIC, "selinuxfs"},
      {SMACK_MAGIC, "smackfs"},
      {BPF_FS_MAGIC, "bpffs"},
      {DEVPTS_SUPER_MAGIC, "devpts"},
      {PSTOREFS_MAGIC, "pstore"},
      {EFIVARFS_MAGIC, "efivarfs"},
      {BINFMTFS_MAGIC, "binfmt_misc"},
      {NSFS_MAGIC, "nsfs"},
      {0x62656570, "configfs"},
      {0x65735543, "fusectl"},
      {0x19800202, "mqueue"},
  };
  for (const Known& known : kPseudo) {
    if (known.magic == type) return known.name;
  }
  return std::nullopt;
}

// An error when `fd` (the target, or its directory) is on a pseudo-filesystem.
Status RefusePseudoFilesystem(int fd, const std::string& path) {
  struct statfs fs {};
  if (fstatfs(fd, &fs) != 0) return ErrnoError(errno, "cannot statfs", path);
  const auto name = PseudoFilesystemName(fs.f_type);
  if (!name) return {};
  return PathError(ErrorCode::kInvalidArgument,
                   fmt::format("is on {}, a kernel interface rather than storage; iowatch never "
                               "probes it, whatever the flags",
                               *name),
                   path);
}

// fsync=N counts as writing: only jobs that mean to change data ask for it.
bool JobWrites(const JobSpec& spec) { return WritesData(spec.rw) || spec.fsync > 0; }

struct Alignment {
  uint32_t memory = kPageBytes;
  uint32_t offset = 1;
};

// The logical block size of the device holding a file; a partition has no
// queue/ of its own, its parent disk's applies. Filesystems without a
// backing device (btrfs subvolumes, overlay, NFS) get the default.
uint32_t LogicalBlockSize(dev_t device, const FileTree& sysfs) {
  const std::string dir = fmt::format("dev/block/{}:{}/", major(device), minor(device));
  for (const char* file : {"queue/logical_block_size", "../queue/logical_block_size"}) {
    const auto text = sysfs.Read(dir + file, kMaxSysfsAttributeBytes);
    const auto size = text ? ParseDecimalLine<uint32_t>(*text) : std::nullopt;
    if (size && *size > 0) return *size;
  }
  return kDefaultLogicalBlockBytes;
}

// statx(STATX_DIOALIGN) where the kernel reports it (Linux 6.1 for files,
// 6.11 for block devices), else the logical block size.
Result<Alignment> DirectIoAlignment(int fd, const struct stat& st, const std::string& path,
                                    const FileTree& sysfs) {
  struct statx stx {};
  if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
      (stx.stx_mask & STATX_DIOALIGN) != 0) {
    // Reported but zero: this file cannot do direct I/O (ext4 data=journal,
    // encryption, inline data); O_DIRECT would silently be buffered.
    if (stx.stx_dio_offset_align == 0) return DirectIoUnsupported(path);
    return Alignment{std::max(kPageBytes, stx.stx_dio_mem_align), stx.stx_dio_offset_align};
  }
  uint32_t logical = 0;
  if (S_ISBLK(st.st_mode)) {
    int size = 0;
    logical = ioctl(fd, BLKSSZGET, &size) == 0 && size > 0 ? static_cast<uint32_t>(size)
                                                           : kDefaultLogicalBlockBytes;
  } else {
    logical = LogicalBlockSize(st.st_dev, sysfs);
  }
  return Alignment{std::max(kPageBytes, logical), logical};
}

Status CheckAlignment(const JobSpec& spec, uint32_t alignment, const std::string& path,
                      bool block_device) {
  const std::pair<const char*, uint64_t> values[] = {
      {"bs", spec.block_size}, {"offset", spec.offset}, {"size", spec.size}};
  for (const auto& [name, value] : values) {
    if (value % alignment == 0) continue;
    return PathError(
        ErrorCode::kInvalidArgument,
        fmt::format("{}={} is not a multiple of the direct-I/O alignment {} of this {}", name,
                    value, alignment, block_device ? "device" : "file"),
        path);
  }
  return {};
}

int JobOpenFlags(const JobSpec& spec, bool writes) {
  return (writes ? O_RDWR : O_RDONLY) | (spec.direct ? O_DIRECT : 0);
}

// `fd` (just opened, -1 with errno on failure) when it is still the object
// that was inspected: it may have been replaced in between.
Result<int> SameObject(UniqueFd fd, const struct stat& inspected, const std::string& path,
                       bool direct, std::string_view what = "cannot open") {
  if (fd.get() < 0) {
    if (errno == EINVAL && direct) return DirectIoUnsupported(path);
    if (errno == ELOOP) return SymlinkRefused(path);
    return ErrnoError(errno, std::string(what), path);
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return ErrnoError(errno, "cannot stat", path);
  if (st.st_dev != inspected.st_dev || st.st_ino != inspected.st_ino) {
    return PathError(ErrorCode::kIo, "was replaced while being prepared", path);
  }
  return fd.release();
}

// The region the job may touch; `size` is the file's or device's size.
Status SetRegion(const JobSpec& spec, uint64_t size, bool may_extend, PreparedTarget& target) {
  target.region_offset = spec.offset;
  if (spec.size == 0) {
    if (spec.offset >= size) {
      return PathError(
          ErrorCode::kInvalidArgument,
          fmt::format("offset={} is at or beyond the end ({} bytes)", spec.offset, size),
          target.path);
    }
    target.region_size = size - spec.offset;
    return {};
  }
  target.region_size = spec.size;
  if (spec.offset > UINT64_MAX - spec.size) {
    return PathError(ErrorCode::kInvalidArgument, "offset+size overflows", target.path);
  }
  if (!may_extend && spec.offset + spec.size > size) {
    return PathError(
        ErrorCode::kInvalidArgument,
        fmt::format(
            "offset+size ({} bytes) exceeds the size of this {} ({} bytes){}",
            spec.offset + spec.size, target.is_block_device ? "device" : "file", size,
            target.is_block_device ? "" : ", which iowatch did not create and will not extend"),
        target.path);
  }
  return {};
}

Result<PreparedTarget> PrepareBlockDevice(const JobSpec& spec, const TargetPolicy& policy,
                                          const std::string& path, const struct stat& st) {
  if (!policy.allow_block_device) {
    return PathError(ErrorCode::kInvalidArgument,
                     "is a block device; pass --allow-block-device to read it", path);
  }
  const bool writes = JobWrites(spec);
  if (writes && !policy.destructive) {
    return PathError(ErrorCode::kInvalidArgument,
                     "is a block device, and writing to a block device destroys its data; pass "
                     "--destructive to allow this job's writes",
                     path);
  }
  PreparedTarget target;
  target.path = path;
  target.is_block_device = true;
  target.device = st.st_rdev;
  auto fd =
      SameObject(UniqueFd(OpenNoEintr(path, JobOpenFlags(spec, writes))), st, path, spec.direct);
  if (!fd) return ErrorOf(fd);
  target.fd = *fd;
  uint64_t size = 0;
  if (ioctl(target.fd, BLKGETSIZE64, &size) != 0) {
    return ErrnoError(errno, "cannot read the device size", path);
  }
  if (auto region = SetRegion(spec, size, false, target); !region) {
    return ErrorOf(region);
  }
  if (spec.direct) {
    auto alignment = DirectIoAlignment(target.fd, st, path, FileTree(policy.sysfs));
    if (!alignment) return ErrorOf(alignment);
    if (auto ok = CheckAlignment(spec, alignment->offset, path, true); !ok) {
      return ErrorOf(ok);
    }
    target.memory_alignment = alignment->memory;
    target.offset_alignment = alignment->offset;
  } else {
    target.offset_alignment = 1;
  }
  return target;
}

// Alignment of an open file for the job, with tmpfs refused under direct=1.
Result<Alignment> FileAlignment(const JobSpec& spec, int fd, const struct stat& st,
                                const std::string& path, const TargetPolicy& policy) {
  if (!spec.direct) return Alignment{};
  struct statfs fs {};
  if (fstatfs(fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC) return DirectIoOnTmpfs(path);
  auto alignment = DirectIoAlignment(fd, st, path, FileTree(policy.sysfs));
  if (!alignment) return alignment;
  if (auto ok = CheckAlignment(spec, alignment->offset, path, false); !ok) {
    return ErrorOf(ok);
  }
  return alignment;
}

// Lays out [filled, required): through O_DIRECT when the job uses it and the
// end is aligned (a size=0 job may inherit an unaligned file size), so the
// fill does not flood the page cache; buffered otherwise.
Status FillFile(const JobSpec& spec, const ProbeFilePath& where, const struct stat& st,
                uint64_t filled, uint64_t required, uint32_t alignment,
                const std::atomic<bool>* cancel) {
  const bool direct = spec.direct && required % alignment == 0;
  auto fd = SameObject(UniqueFd(where.OpenFile(O_WRONLY | (direct ? O_DIRECT : 0))), st,
                       where.path(), direct, "cannot open for filling");
  if (!fd) return ErrorOf(fd);
  const UniqueFd owned(*fd);
  return LayOutProbeFile(owned.get(), where, filled, required, direct ? alignment : 1, cancel);
}

Result<PreparedTarget> PrepareExistingFile(const JobSpec& spec, const TargetPolicy& policy,
                                           const std::string& path,
                                           const std::atomic<bool>* cancel) {
  auto where = ProbeFilePath::Open(path);
  if (!where) return ErrorOf(where);
  // O_NONBLOCK: should the path have become a FIFO since stat, do not hang.
  UniqueFd probe(where->OpenFile(O_RDONLY | O_NONBLOCK));
  if (probe.get() < 0 && errno == ELOOP) return SymlinkRefused(path);
  if (probe.get() < 0) return ErrnoError(errno, "cannot open", path);
  if (Status real = RefusePseudoFilesystem(probe.get(), path); !real) {
    return ErrorOf(real);
  }
  struct stat st {};
  if (fstat(probe.get(), &st) != 0) return ErrnoError(errno, "cannot stat", path);
  // Every decision below concerns what was opened, not what stat saw.
  if (!S_ISREG(st.st_mode)) {
    return PathError(ErrorCode::kIo, "was replaced while being prepared", path);
  }
  auto marker = ReadProbeFileMarker(probe.get(), *where);
  if (!marker) return ErrorOf(marker);
  const bool writes = JobWrites(spec);
  if (!marker->present && writes && !policy.destructive) {
    return PathError(
        ErrorCode::kInvalidArgument,
        "was not created by iowatch (it has no user.iowatch.probe attribute), and this "
        "job writes to it; pass --destructive to allow writing to it",
        path);
  }
  PreparedTarget target;
  target.path = path;
  target.device = st.st_dev;
  const auto size = static_cast<uint64_t>(st.st_size);
  if (auto region = SetRegion(spec, size, marker->present, target); !region) {
    return ErrorOf(region);
  }
  auto alignment = FileAlignment(spec, probe.get(), st, path, policy);
  if (!alignment) return ErrorOf(alignment);
  target.memory_alignment = alignment->memory;
  target.offset_alignment = alignment->offset;

  const uint64_t required = target.region_offset + target.region_size;
  const uint64_t filled = std::min(marker->filled_bytes, size);
  if (marker->present && filled < required) {
    if (auto laid = FillFile(spec, *where, st, filled, required, alignment->offset, cancel);
        !laid) {
      return ErrorOf(laid);
    }
  }
  auto fd =
      SameObject(UniqueFd(where->OpenFile(JobOpenFlags(spec, writes))), st, path, spec.direct);
  if (!fd) return ErrorOf(fd);
  target.fd = *fd;
  return target;
}

// The checks before a probe file is created, so that a refusal leaves no
// trace; the file's directory, opened.
Result<ProbeFilePath> OpenToCreate(const JobSpec& spec, const std::string& path) {
  if (spec.size == 0) {
    return PathError(ErrorCode::kInvalidArgument,
                     "does not exist, and size is required to create it", path);
  }
  if (spec.offset > UINT64_MAX - spec.size) {
    return PathError(ErrorCode::kInvalidArgument, "offset+size overflows", path);
  }
  auto where = ProbeFilePath::Open(path);
  if (!where) return ErrorOf(where);
  if (Status real = RefusePseudoFilesystem(where->dir_fd(), path); !real) {
    return ErrorOf(real);
  }
  if (spec.direct) {
    if (auto ok = CheckFilesystemAllowsDirectIo(where->directory()); !ok) {
      Error error = ok.error();
      error.path = path;
      return std::unexpected(std::move(error));
    }
  }
  return where;
}

Result<PreparedTarget> CreateFile(const JobSpec& spec, const TargetPolicy& policy,
                                  const std::string& path, const std::atomic<bool>* cancel) {
  auto where = OpenToCreate(spec, path);
  if (!where) return ErrorOf(where);
  UniqueFd created(where->OpenFile(O_RDWR | O_CREAT | O_EXCL, 0600));
  if (created.get() < 0) return ErrnoError(errno, "cannot create", path);
  // From here on a failure removes what this call created: a half-filled
  // file must not be left behind (its marker would say 0, but the space
  // would stay taken).
  bool keep = false;
  struct Remover {
    const ProbeFilePath& where;
    const bool& keep;
    ~Remover() {
      if (keep) return;
      unlinkat(where.dir_fd(), where.name().c_str(), 0);
      unlinkat(where.dir_fd(), ProbeFileSidecarPath(where.name()).c_str(), 0);
    }
  } remover{*where, keep};

  if (auto marked = WriteProbeFileMarker(created.get(), *where, 0); !marked) {
    return ErrorOf(marked);
  }
  struct stat st {};
  if (fstat(created.get(), &st) != 0) return ErrnoError(errno, "cannot stat", path);
  auto alignment = FileAlignment(spec, created.get(), st, path, policy);
  if (!alignment) return ErrorOf(alignment);
  if (auto laid = FillFile(spec, *where, st, 0, spec.offset + spec.size, alignment->offset, cancel);
      !laid) {
    // Interrupted, the file and its marker stay: the next run goes on filling.
    keep = laid.error().os_errno == ECANCELED;
    return ErrorOf(laid);
  }
  PreparedTarget target;
  target.path = path;
  target.created = true;
  target.device = st.st_dev;
  target.region_offset = spec.offset;
  target.region_size = spec.size;
  target.memory_alignment = alignment->memory;
  target.offset_alignment = alignment->offset;
  auto fd = SameObject(UniqueFd(where->OpenFile(JobOpenFlags(spec, JobWrites(spec)))), st, path,
                       spec.direct);
  if (!fd) return ErrorOf(fd);
  target.fd = *fd;
  keep = true;
  return target;
}

}  // namespace

PreparedTarget::PreparedTarget(PreparedTarget&& other) noexcept
    : fd(std::exchange(other.fd, -1)),
      path(std::move(other.path)),
      is_block_device(other.is_block_device),
      created(other.created),
      region_offset(other.region_offset),
      region_size(other.region_size),
      memory_alignment(other.memory_alignment),
      offset_alignment(other.offset_alignment),
      device(other.device) {}

PreparedTarget& PreparedTarget::operator=(PreparedTarget&& other) noexcept {
  if (this == &other) return *this;
  if (fd >= 0) close(fd);
  fd = std::exchange(other.fd, -1);
  path = std::move(other.path);
  is_block_device = other.is_block_device;
  created = other.created;
  region_offset = other.region_offset;
  region_size = other.region_size;
  memory_alignment = other.memory_alignment;
  offset_alignment = other.offset_alignment;
  device = other.device;
  return *this;
}

PreparedTarget::~PreparedTarget() {
  if (fd >= 0) close(fd);
}

Status CheckFilesystemAllowsDirectIo(const std::string& directory) {
  struct statfs fs {};
  if (statfs(directory.c_str(), &fs) != 0) return ErrnoError(errno, "cannot statfs", directory);
  if (fs.f_type == TMPFS_MAGIC) return DirectIoOnTmpfs(directory);
  // An unnamed O_TMPFILE inode asks the filesystem without leaving a file
  // behind; F_SETFL fails with EINVAL where O_DIRECT is not supported.
  UniqueFd probe(OpenNoEintr(directory, O_TMPFILE | O_RDWR, 0600));
  if (probe.get() < 0) return {};  // no O_TMPFILE here: opening the file itself will tell
  const int flags = fcntl(probe.get(), F_GETFL);
  if (flags >= 0 && fcntl(probe.get(), F_SETFL, flags | O_DIRECT) != 0 && errno == EINVAL) {
    return DirectIoUnsupported(directory);
  }
  return {};
}

Result<PreparedTarget> PrepareTarget(const JobSpec& spec, const TargetPolicy& policy,
                                     const std::atomic<bool>* cancel) {
  if (spec.filename.empty() && spec.directory.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "no target: set filename or directory");
  }
  const std::string path = spec.TargetPath();
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return CreateFile(spec, policy, path, cancel);
    return ErrnoError(errno, "cannot stat", path);
  }
  if (S_ISBLK(st.st_mode)) return PrepareBlockDevice(spec, policy, path, st);
  if (S_ISREG(st.st_mode)) return PrepareExistingFile(spec, policy, path, cancel);
  return PathError(ErrorCode::kInvalidArgument, "is neither a regular file nor a block device",
                   path);
}

}  // namespace iowatch::probes
