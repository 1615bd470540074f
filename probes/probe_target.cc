#include "probes/probe_target.h"

#include <fcntl.h>
#include <linux/fs.h>     // BLKGETSIZE64, BLKSSZGET
#include <linux/magic.h>  // TMPFS_MAGIC
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <span>
#include <utility>

namespace iowatch::probes {
namespace {

constexpr char kMarkerXattr[] = "user.iowatch.probe";
constexpr char kSidecarSuffix[] = ".iowatch";
constexpr size_t kFillChunkBytes = size_t{1} << 20;
// Buffers aligned to a page satisfy every direct-I/O memory alignment a
// kernel asks for and never straddle more pages than needed.
constexpr uint32_t kPageBytes = 4096;
// What a device that reports nothing is assumed to need (the historical
// sector size).
constexpr uint32_t kDefaultLogicalBlockBytes = 512;

// Closes the descriptor it owns.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::unexpected<Error> Fail(ErrorCode code, std::string message, std::string path, int err = 0) {
  Error error;
  error.code = code;
  error.message = std::move(message);
  error.path = std::move(path);
  error.os_errno = err;
  return std::unexpected<Error>(std::move(error));
}

std::unexpected<Error> DirectIoUnsupported(std::string path) {
  return Fail(ErrorCode::kUnsupported,
              "the filesystem does not support O_DIRECT (direct=1); use --direct=0 to measure "
              "through the page cache",
              std::move(path), EINVAL);
}

// tmpfs (Linux ≥ 6.6) accepts O_DIRECT but serves it from memory, so it
// would report memory speed as device speed.
std::unexpected<Error> DirectIoOnTmpfs(std::string path) {
  return Fail(ErrorCode::kUnsupported,
              "the filesystem does not support O_DIRECT (direct=1): it is tmpfs, which keeps "
              "files in memory; use --direct=0 to measure through the page cache",
              std::move(path), EINVAL);
}

int OpenNoEintr(const std::string& path, int flags, mode_t mode = 0) {
  int fd = -1;
  do {
    fd = open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// fsync=N counts as writing: only jobs that mean to change data ask for it.
bool JobWrites(const JobSpec& spec) { return WritesData(spec.rw) || spec.fsync > 0; }

std::string ParentDirectory(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

bool IsNoSpace(int err) { return err == ENOSPC || err == EDQUOT; }

// xoshiro256** (Blackman & Vigna): fast, and its output does not compress,
// which is all the fill needs (no cryptographic strength).
class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    for (uint64_t& word : state_) word = SplitMix64(seed);
  }
  void Fill(std::span<std::byte> out) {
    size_t i = 0;
    for (; i + sizeof(uint64_t) <= out.size(); i += sizeof(uint64_t)) {
      const uint64_t value = Next();
      std::memcpy(out.data() + i, &value, sizeof value);
    }
    const uint64_t value = Next();
    std::memcpy(out.data() + i, &value, out.size() - i);
  }

 private:
  static uint64_t SplitMix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
  }
  uint64_t Next() {
    const uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = std::rotl(state_[3], 45);
    return result;
  }
  std::array<uint64_t, 4> state_{};
};

// The marker says "iowatch created this file, and [0, filled) holds data".
// It lives in the xattr user.iowatch.probe (decimal); on filesystems without
// user xattrs in a sidecar file "<path>.iowatch" with the same text. It is
// written only after the data it vouches for is on disk (fdatasync), so a
// crash while filling leaves the old, smaller value and the next run refills.
struct Marker {
  bool present = false;
  uint64_t filled_bytes = 0;
};

uint64_t ParseFilled(std::string_view text) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // Unreadable means "nothing is known to be filled": refilling is safe.
  return ec == std::errc() && end == text.data() + text.size() ? value : 0;
}

Result<Marker> ReadMarker(int fd, const std::string& path) {
  std::array<char, 32> value{};
  const ssize_t n = fgetxattr(fd, kMarkerXattr, value.data(), value.size());
  if (n >= 0) return Marker{true, ParseFilled({value.data(), static_cast<size_t>(n)})};
  if (errno == ERANGE) return Marker{true, 0};
  if (errno == ENODATA) return Marker{};
  if (errno != ENOTSUP)
    return ErrnoError(errno, "cannot read the attribute user.iowatch.probe", path);
  std::ifstream sidecar(path + kSidecarSuffix);
  if (!sidecar) return Marker{};
  std::string text;
  sidecar >> text;
  return Marker{true, ParseFilled(text)};
}

Result<void> WriteMarker(int fd, const std::string& path, uint64_t filled_bytes) {
  const std::string value = std::to_string(filled_bytes);
  if (fsetxattr(fd, kMarkerXattr, value.data(), value.size(), 0) == 0) return {};
  if (errno != ENOTSUP)
    return ErrnoError(errno, "cannot set the attribute user.iowatch.probe", path);
  // A torn write leaves a prefix of the digits, a smaller number: safe.
  const std::string sidecar = path + kSidecarSuffix;
  UniqueFd out(OpenNoEintr(sidecar, O_WRONLY | O_CREAT | O_TRUNC, 0600));
  if (out.get() < 0) return ErrnoError(errno, "cannot write the marker file", sidecar);
  if (write(out.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size()) ||
      fsync(out.get()) != 0) {
    return ErrnoError(errno, "cannot write the marker file", sidecar);
  }
  return {};
}

struct Alignment {
  uint32_t memory = kPageBytes;
  uint32_t offset = 1;
};

uint32_t ReadSysfsNumber(const std::string& file) {
  std::ifstream in(file);
  uint32_t value = 0;
  return in >> value ? value : 0;
}

// The logical block size of the device holding a file; a partition has no
// queue/ of its own, its parent disk's applies. Filesystems without a
// backing device (btrfs subvolumes, overlay, NFS) get the default.
uint32_t LogicalBlockSize(dev_t device) {
  const std::string dir = fmt::format("/sys/dev/block/{}:{}/", major(device), minor(device));
  for (const char* file : {"queue/logical_block_size", "../queue/logical_block_size"}) {
    if (const uint32_t size = ReadSysfsNumber(dir + file); size > 0) return size;
  }
  return kDefaultLogicalBlockBytes;
}

// statx(STATX_DIOALIGN) where the kernel reports it (Linux 6.1 for files,
// 6.11 for block devices), else the logical block size.
Result<Alignment> DirectIoAlignment(int fd, const struct stat& st, const std::string& path) {
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
    logical = LogicalBlockSize(st.st_dev);
  }
  return Alignment{std::max(kPageBytes, logical), logical};
}

Result<void> CheckAlignment(const JobSpec& spec, uint32_t alignment, const std::string& path,
                            bool block_device) {
  const std::pair<const char*, uint64_t> values[] = {
      {"bs", spec.block_size}, {"offset", spec.offset}, {"size", spec.size}};
  for (const auto& [name, value] : values) {
    if (value % alignment == 0) continue;
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{}={} is not a multiple of the direct-I/O alignment {} of this {}",
                            name, value, alignment, block_device ? "device" : "file"),
                path);
  }
  return {};
}

// Opens `path` for the job and checks it is still the object that was
// inspected (it may have been replaced in between).
Result<int> OpenForJob(const JobSpec& spec, const std::string& path, bool writes,
                       const struct stat& inspected) {
  const int flags = (writes ? O_RDWR : O_RDONLY) | (spec.direct ? O_DIRECT : 0);
  UniqueFd fd(OpenNoEintr(path, flags));
  if (fd.get() < 0) {
    if (errno == EINVAL && spec.direct) return DirectIoUnsupported(path);
    return ErrnoError(errno, "cannot open", path);
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return ErrnoError(errno, "cannot stat", path);
  if (st.st_dev != inspected.st_dev || st.st_ino != inspected.st_ino) {
    return Fail(ErrorCode::kIo, "was replaced while being prepared", path);
  }
  return fd.release();
}

// Writes pseudo-random data over [begin, end) and makes it durable; returns
// 0 or an errno. Fresh data per chunk: a repeated chunk could be
// deduplicated or compressed by the storage below.
int FillRange(int fd, uint64_t begin, uint64_t end) {
  std::unique_ptr<std::byte, decltype(&std::free)> buffer(
      static_cast<std::byte*>(std::aligned_alloc(kPageBytes, kFillChunkBytes)), &std::free);
  if (!buffer) return ENOMEM;
  Xoshiro256 random(std::random_device{}() ^ begin);
  for (uint64_t offset = begin; offset < end;) {
    const size_t length = static_cast<size_t>(std::min<uint64_t>(kFillChunkBytes, end - offset));
    random.Fill({buffer.get(), length});
    size_t done = 0;
    while (done < length) {
      const ssize_t n =
          pwrite(fd, buffer.get() + done, length - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno;
      if (n == 0) return EIO;
      done += static_cast<size_t>(n);
    }
    offset += length;
  }
  if (fdatasync(fd) != 0) return errno;
  // The data is on disk; keeping it cached would make the first buffered
  // (direct=0) run measure memory.
  posix_fadvise(fd, static_cast<off_t>(begin), static_cast<off_t>(end - begin),
                POSIX_FADV_DONTNEED);
  return 0;
}

// Grows the file to `required` bytes (preallocating, so ENOSPC comes before
// the time spent writing and the extent is allocated in one piece), fills
// [filled, required) (from `filled` rounded down to `alignment`, which is 1
// unless `fd` is O_DIRECT) and then records `required` in the marker.
Result<void> LayOut(int fd, const std::string& path, uint64_t filled, uint64_t required,
                    uint32_t alignment) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return ErrnoError(errno, "cannot stat", path);
  const auto size = static_cast<uint64_t>(st.st_size);
  const auto no_space = [&](int err) {
    // Give the space back; the marker still vouches only for what it did.
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
      // Nothing more to do: the next run refills from the marker anyway.
    }
    return Fail(
        ErrorCode::kIo,
        fmt::format("no space left on {} to lay out {} bytes", ParentDirectory(path), required),
        path, err);
  };
  if (required > size) {
    int ret = 0;
    do {
      ret = fallocate(fd, 0, static_cast<off_t>(size), static_cast<off_t>(required - size));
    } while (ret != 0 && errno == EINTR);
    if (ret != 0 && IsNoSpace(errno)) return no_space(errno);
    // EOPNOTSUPP: the filesystem cannot preallocate; the fill allocates.
    if (ret != 0 && errno != EOPNOTSUPP) return ErrnoError(errno, "cannot preallocate", path);
  }
  const uint64_t begin = filled / alignment * alignment;
  if (const int err = FillRange(fd, begin, required); err != 0) {
    if (IsNoSpace(err)) return no_space(err);
    return ErrnoError(err, "cannot fill", path);
  }
  return WriteMarker(fd, path, required);
}

// The region the job may touch; `size` is the file's or device's size.
Result<void> SetRegion(const JobSpec& spec, uint64_t size, bool may_extend,
                       PreparedTarget& target) {
  target.region_offset = spec.offset;
  if (spec.size == 0) {
    if (spec.offset >= size) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("offset={} is at or beyond the end ({} bytes)", spec.offset, size),
                  target.path);
    }
    target.region_size = size - spec.offset;
    return {};
  }
  target.region_size = spec.size;
  if (spec.offset > UINT64_MAX - spec.size) {
    return Fail(ErrorCode::kInvalidArgument, "offset+size overflows", target.path);
  }
  if (!may_extend && spec.offset + spec.size > size) {
    return Fail(
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
    return Fail(ErrorCode::kInvalidArgument,
                "is a block device; pass --allow-block-device to read it", path);
  }
  const bool writes = JobWrites(spec);
  if (writes && !policy.destructive) {
    return Fail(ErrorCode::kInvalidArgument,
                "is a block device, and writing to a block device destroys its data; pass "
                "--destructive to allow this job's writes",
                path);
  }
  PreparedTarget target;
  target.path = path;
  target.is_block_device = true;
  target.device = st.st_rdev;
  auto fd = OpenForJob(spec, path, writes, st);
  if (!fd) return std::unexpected(fd.error());
  target.fd = *fd;
  uint64_t size = 0;
  if (ioctl(target.fd, BLKGETSIZE64, &size) != 0) {
    return ErrnoError(errno, "cannot read the device size", path);
  }
  if (auto region = SetRegion(spec, size, false, target); !region) {
    return std::unexpected(region.error());
  }
  if (spec.direct) {
    auto alignment = DirectIoAlignment(target.fd, st, path);
    if (!alignment) return std::unexpected(alignment.error());
    if (auto ok = CheckAlignment(spec, alignment->offset, path, true); !ok) {
      return std::unexpected(ok.error());
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
                                const std::string& path) {
  if (!spec.direct) return Alignment{};
  struct statfs fs {};
  if (fstatfs(fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC) return DirectIoOnTmpfs(path);
  auto alignment = DirectIoAlignment(fd, st, path);
  if (!alignment) return alignment;
  if (auto ok = CheckAlignment(spec, alignment->offset, path, false); !ok) {
    return std::unexpected(ok.error());
  }
  return alignment;
}

// Lays out [filled, required): through O_DIRECT when the job uses it and the
// end is aligned (a size=0 job may inherit an unaligned file size), so the
// fill does not flood the page cache; buffered otherwise.
Result<void> FillFile(const JobSpec& spec, const std::string& path, uint64_t filled,
                      uint64_t required, uint32_t alignment) {
  const bool direct = spec.direct && required % alignment == 0;
  UniqueFd fd(OpenNoEintr(path, O_WRONLY | (direct ? O_DIRECT : 0)));
  if (fd.get() < 0 && errno == EINVAL && direct) return DirectIoUnsupported(path);
  if (fd.get() < 0) return ErrnoError(errno, "cannot open for filling", path);
  return LayOut(fd.get(), path, filled, required, direct ? alignment : 1);
}

Result<PreparedTarget> PrepareExistingFile(const JobSpec& spec, const TargetPolicy& policy,
                                           const std::string& path) {
  // O_NONBLOCK: should the path have become a FIFO since stat, do not hang.
  UniqueFd probe(OpenNoEintr(path, O_RDONLY | O_NONBLOCK));
  if (probe.get() < 0) return ErrnoError(errno, "cannot open", path);
  struct stat st {};
  if (fstat(probe.get(), &st) != 0) return ErrnoError(errno, "cannot stat", path);
  // Every decision below concerns what was opened, not what stat saw.
  if (!S_ISREG(st.st_mode)) return Fail(ErrorCode::kIo, "was replaced while being prepared", path);
  auto marker = ReadMarker(probe.get(), path);
  if (!marker) return std::unexpected(marker.error());
  const bool writes = JobWrites(spec);
  if (!marker->present && writes && !policy.destructive) {
    return Fail(ErrorCode::kInvalidArgument,
                "was not created by iowatch (it has no user.iowatch.probe attribute), and this "
                "job writes to it; pass --destructive to allow writing to it",
                path);
  }
  PreparedTarget target;
  target.path = path;
  target.device = st.st_dev;
  const auto size = static_cast<uint64_t>(st.st_size);
  if (auto region = SetRegion(spec, size, marker->present, target); !region) {
    return std::unexpected(region.error());
  }
  auto alignment = FileAlignment(spec, probe.get(), st, path);
  if (!alignment) return std::unexpected(alignment.error());
  target.memory_alignment = alignment->memory;
  target.offset_alignment = alignment->offset;

  const uint64_t required = target.region_offset + target.region_size;
  const uint64_t filled = std::min(marker->filled_bytes, size);
  if (marker->present && filled < required) {
    if (auto laid = FillFile(spec, path, filled, required, alignment->offset); !laid) {
      return std::unexpected(laid.error());
    }
  }
  auto fd = OpenForJob(spec, path, writes, st);
  if (!fd) return std::unexpected(fd.error());
  target.fd = *fd;
  return target;
}

Result<PreparedTarget> CreateFile(const JobSpec& spec, const std::string& path) {
  if (spec.size == 0) {
    return Fail(ErrorCode::kInvalidArgument, "does not exist, and size is required to create it",
                path);
  }
  if (spec.offset > UINT64_MAX - spec.size) {
    return Fail(ErrorCode::kInvalidArgument, "offset+size overflows", path);
  }
  const std::string directory = ParentDirectory(path);
  struct stat dir_st {};
  if (stat(directory.c_str(), &dir_st) != 0 || !S_ISDIR(dir_st.st_mode)) {
    return Fail(ErrorCode::kNotFound,
                fmt::format("cannot create: the directory {} does not exist", directory), path,
                ENOENT);
  }
  // Before creating anything, so a refusal leaves no trace.
  if (spec.direct) {
    if (auto ok = CheckFilesystemAllowsDirectIo(directory); !ok) {
      Error error = ok.error();
      error.path = path;
      return std::unexpected(std::move(error));
    }
  }
  UniqueFd created(OpenNoEintr(path, O_RDWR | O_CREAT | O_EXCL, 0600));
  if (created.get() < 0) return ErrnoError(errno, "cannot create", path);
  // From here on a failure removes what this call created: a half-filled
  // file must not be left behind (its marker would say 0, but the space
  // would stay taken).
  bool keep = false;
  struct Remover {
    const std::string& path;
    const bool& keep;
    ~Remover() {
      if (keep) return;
      unlink(path.c_str());
      unlink((path + kSidecarSuffix).c_str());
    }
  } remover{path, keep};

  if (auto marked = WriteMarker(created.get(), path, 0); !marked) {
    return std::unexpected(marked.error());
  }
  struct stat st {};
  if (fstat(created.get(), &st) != 0) return ErrnoError(errno, "cannot stat", path);
  auto alignment = FileAlignment(spec, created.get(), st, path);
  if (!alignment) return std::unexpected(alignment.error());
  if (auto laid = FillFile(spec, path, 0, spec.offset + spec.size, alignment->offset); !laid) {
    return std::unexpected(laid.error());
  }
  PreparedTarget target;
  target.path = path;
  target.created = true;
  target.device = st.st_dev;
  target.region_offset = spec.offset;
  target.region_size = spec.size;
  target.memory_alignment = alignment->memory;
  target.offset_alignment = alignment->offset;
  auto fd = OpenForJob(spec, path, JobWrites(spec), st);
  if (!fd) return std::unexpected(fd.error());
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

Result<void> CheckFilesystemAllowsDirectIo(const std::string& directory) {
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

Result<PreparedTarget> PrepareTarget(const JobSpec& spec, const TargetPolicy& policy) {
  if (spec.filename.empty() && spec.directory.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "no target: set filename or directory");
  }
  const std::string path = spec.TargetPath();
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return CreateFile(spec, path);
    return ErrnoError(errno, "cannot stat", path);
  }
  if (S_ISBLK(st.st_mode)) return PrepareBlockDevice(spec, policy, path, st);
  if (S_ISREG(st.st_mode)) return PrepareExistingFile(spec, policy, path);
  return Fail(ErrorCode::kInvalidArgument, "is neither a regular file nor a block device", path);
}

}  // namespace iowatch::probes
