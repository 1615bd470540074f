#include "probes/target/probe_file_layout.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string_view>

#include "common/decimal.h"
#include "probes/stats/portable_random.h"
#include "probes/target/posix_file.h"

namespace iowatch::probes {
namespace {

constexpr char kMarkerXattr[] = "user.iowatch.probe";
constexpr char kSidecarSuffix[] = ".iowatch";
constexpr size_t kFillChunkBytes = size_t{1} << 20;

bool IsNoSpace(int err) { return err == ENOSPC || err == EDQUOT; }

// Unreadable means "nothing is known to be filled": refilling is safe.
uint64_t ParseFilled(std::string_view text) { return ParseDecimal<uint64_t>(text).value_or(0); }

// SidecarText's numbers, and whether anything but its newline follows them.
struct SidecarFields {
  uint64_t filled = 0, dev = 0, ino = 0;
  bool trailing = false;
};

std::optional<SidecarFields> ParseSidecar(std::string_view text) {
  SidecarFields f;
  for (uint64_t* field : {&f.filled, &f.dev, &f.ino}) {
    const size_t stop = field == &f.ino ? text.find_first_not_of("0123456789") : text.find(' ');
    const auto value = ParseDecimal<uint64_t>(text.substr(0, stop));
    if (!value) return std::nullopt;
    *field = *value;
    text.remove_prefix(stop == text.npos ? text.size() : stop + (field != &f.ino));
  }
  f.trailing = !text.empty() && text != "\n";
  return f;
}

// Writes pseudo-random data over [begin, end) and makes it durable; returns
// 0 or an errno. Fresh data per chunk: a repeated chunk could be
// deduplicated or compressed by the storage below. `cancel` is looked at
// before each chunk: set, what was written is made durable, `reached` says
// how far, and the answer is ECANCELED.
int FillRange(int fd, uint64_t begin, uint64_t end, const std::atomic<bool>* cancel,
              uint64_t& reached) {
  reached = begin;
  std::unique_ptr<std::byte, decltype(&std::free)> buffer(
      static_cast<std::byte*>(std::aligned_alloc(kPageBytes, kFillChunkBytes)), &std::free);
  if (!buffer) return ENOMEM;
  PortableRandom random(std::random_device{}() ^ begin);
  for (uint64_t offset = begin; offset < end;) {
    if (cancel != nullptr && cancel->load()) {
      if (fdatasync(fd) != 0) return errno;
      reached = offset;
      return ECANCELED;
    }
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
  reached = end;
  // The data is on disk; keeping it cached would make the first buffered
  // (direct=0) run measure memory.
  posix_fadvise(fd, static_cast<off_t>(begin), static_cast<off_t>(end - begin),
                POSIX_FADV_DONTNEED);
  return 0;
}

}  // namespace

std::string ProbeFileSidecarPath(const std::string& path) { return path + kSidecarSuffix; }

namespace {

// The sidecar's text: "<filled> <st_dev> <st_ino>\n" of the file it marks.
std::string SidecarText(const struct stat& file, uint64_t filled_bytes) {
  return fmt::format("{} {} {}\n", filled_bytes, static_cast<uint64_t>(file.st_dev),
                     static_cast<uint64_t>(file.st_ino));
}

// Whether the sidecar proves that iowatch created the open file `file`: it
// is a regular file (not a symlink), owned by this user and writable only by
// it, and names the file's device and inode. A planted or stale sidecar
// proves nothing, and the file counts as foreign.
std::optional<uint64_t> FilledBySidecar(const ProbeFilePath& where, const struct stat& file) {
  UniqueFd sidecar(
      OpenAtNoFollow(where.dir_fd(), where.name() + kSidecarSuffix, O_RDONLY | O_NONBLOCK));
  struct stat st {};
  if (sidecar.get() < 0 || fstat(sidecar.get(), &st) != 0) return std::nullopt;
  if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
    return std::nullopt;
  }
  if (file.st_uid != geteuid()) return std::nullopt;
  char text[96] = {};
  const ssize_t n = read(sidecar.get(), text, sizeof text - 1);
  if (n <= 0) return std::nullopt;
  const auto fields = ParseSidecar(std::string_view(text, static_cast<size_t>(n)));
  if (!fields || fields->dev != file.st_dev || fields->ino != file.st_ino) return std::nullopt;
  // The digits of `filled` are written whole or not at all (rename), but a
  // trailing byte other than the newline means the text is not ours.
  if (fields->trailing) return uint64_t{0};
  return fields->filled;
}

}  // namespace

Result<ProbeFileMarker> ReadProbeFileMarker(int fd, const ProbeFilePath& where) {
  std::array<char, 32> value{};
  const ssize_t n = fgetxattr(fd, kMarkerXattr, value.data(), value.size());
  if (n >= 0) return ProbeFileMarker{true, ParseFilled({value.data(), static_cast<size_t>(n)})};
  if (errno == ERANGE) return ProbeFileMarker{true, 0};
  if (errno == ENODATA) return ProbeFileMarker{};
  if (errno != ENOTSUP) {
    return ErrnoError(errno, "cannot read the attribute user.iowatch.probe", where.path());
  }
  struct stat file {};
  if (fstat(fd, &file) != 0) return ErrnoError(errno, "cannot stat", where.path());
  const std::optional<uint64_t> filled = FilledBySidecar(where, file);
  if (!filled) return ProbeFileMarker{};
  return ProbeFileMarker{true, *filled};
}

Status WriteProbeFileMarker(int fd, const ProbeFilePath& where, uint64_t filled_bytes) {
  const std::string value = std::to_string(filled_bytes);
  if (fsetxattr(fd, kMarkerXattr, value.data(), value.size(), 0) == 0) return {};
  if (errno != ENOTSUP) {
    return ErrnoError(errno, "cannot set the attribute user.iowatch.probe", where.path());
  }
  struct stat file {};
  if (fstat(fd, &file) != 0) return ErrnoError(errno, "cannot stat", where.path());
  // Written beside and renamed over: a crash leaves the old sidecar or the
  // new one, and a symlink planted as the sidecar is replaced, not followed.
  const std::string sidecar = where.name() + kSidecarSuffix;
  const std::string temporary = sidecar + ".tmp";
  const std::string sidecar_path = ProbeFileSidecarPath(where.path());
  const auto failed = [&](int err) {
    unlinkat(where.dir_fd(), temporary.c_str(), 0);
    return ErrnoError(err, "cannot write the marker file", sidecar_path);
  };
  unlinkat(where.dir_fd(), temporary.c_str(), 0);  // left by a crash: ours, or a trap
  UniqueFd out(OpenAtNoFollow(where.dir_fd(), temporary, O_WRONLY | O_CREAT | O_EXCL, 0600));
  if (out.get() < 0) return ErrnoError(errno, "cannot write the marker file", sidecar_path);
  const std::string text = SidecarText(file, filled_bytes);
  if (write(out.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      fsync(out.get()) != 0) {
    return failed(errno);
  }
  if (renameat(where.dir_fd(), temporary.c_str(), where.dir_fd(), sidecar.c_str()) != 0) {
    return failed(errno);
  }
  fsync(where.dir_fd());  // the rename itself; a lost one only means a refill
  return {};
}

Status LayOutProbeFile(int fd, const ProbeFilePath& where, uint64_t filled, uint64_t required,
                       uint32_t alignment, const std::atomic<bool>* cancel) {
  const std::string& path = where.path();
  struct stat st {};
  if (fstat(fd, &st) != 0) return ErrnoError(errno, "cannot stat", path);
  const auto size = static_cast<uint64_t>(st.st_size);
  const auto no_space = [&](int err) {
    // Give the space back; the marker still vouches only for what it did.
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
      // Nothing more to do: the next run refills from the marker anyway.
    }
    return PathError(
        ErrorCode::kIo,
        fmt::format("no space left on {} to lay out {} bytes", where.directory(), required), path,
        err);
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
  uint64_t reached = begin;
  if (const int err = FillRange(fd, begin, required, cancel, reached); err != 0) {
    if (IsNoSpace(err)) return no_space(err);
    if (err != ECANCELED) return ErrnoError(err, "cannot fill", path);
    // Interrupted: what is on disk is vouched for, the next run goes on.
    if (reached > filled) {
      if (auto marked = WriteProbeFileMarker(fd, where, reached); !marked) return marked;
    }
    return PathError(ErrorCode::kIo,
                     fmt::format("cancelled while laying out the file ({} of {} bytes written; "
                                 "the next run goes on from there)",
                                 reached, required),
                     path, ECANCELED);
  }
  return WriteProbeFileMarker(fd, where, required);
}

}  // namespace iowatch::probes
