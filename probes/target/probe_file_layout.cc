#include "probes/target/probe_file_layout.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <span>
#include <string_view>

#include "probes/stats/portable_random.h"
#include "probes/target/posix_file.h"

namespace iowatch::probes {
namespace {

constexpr char kMarkerXattr[] = "user.iowatch.probe";
constexpr char kSidecarSuffix[] = ".iowatch";
constexpr size_t kFillChunkBytes = size_t{1} << 20;

bool IsNoSpace(int err) { return err == ENOSPC || err == EDQUOT; }

uint64_t ParseFilled(std::string_view text) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // Unreadable means "nothing is known to be filled": refilling is safe.
  return ec == std::errc() && end == text.data() + text.size() ? value : 0;
}

// Writes pseudo-random data over [begin, end) and makes it durable; returns
// 0 or an errno. Fresh data per chunk: a repeated chunk could be
// deduplicated or compressed by the storage below.
int FillRange(int fd, uint64_t begin, uint64_t end) {
  std::unique_ptr<std::byte, decltype(&std::free)> buffer(
      static_cast<std::byte*>(std::aligned_alloc(kPageBytes, kFillChunkBytes)), &std::free);
  if (!buffer) return ENOMEM;
  PortableRandom random(std::random_device{}() ^ begin);
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

}  // namespace

std::string ProbeFileSidecarPath(const std::string& path) { return path + kSidecarSuffix; }

Result<ProbeFileMarker> ReadProbeFileMarker(int fd, const std::string& path) {
  std::array<char, 32> value{};
  const ssize_t n = fgetxattr(fd, kMarkerXattr, value.data(), value.size());
  if (n >= 0) return ProbeFileMarker{true, ParseFilled({value.data(), static_cast<size_t>(n)})};
  if (errno == ERANGE) return ProbeFileMarker{true, 0};
  if (errno == ENODATA) return ProbeFileMarker{};
  if (errno != ENOTSUP) {
    return ErrnoError(errno, "cannot read the attribute user.iowatch.probe", path);
  }
  std::ifstream sidecar(ProbeFileSidecarPath(path));
  if (!sidecar) return ProbeFileMarker{};
  std::string text;
  sidecar >> text;
  return ProbeFileMarker{true, ParseFilled(text)};
}

Result<void> WriteProbeFileMarker(int fd, const std::string& path, uint64_t filled_bytes) {
  const std::string value = std::to_string(filled_bytes);
  if (fsetxattr(fd, kMarkerXattr, value.data(), value.size(), 0) == 0) return {};
  if (errno != ENOTSUP) {
    return ErrnoError(errno, "cannot set the attribute user.iowatch.probe", path);
  }
  // A torn write leaves a prefix of the digits, a smaller number: safe.
  const std::string sidecar = ProbeFileSidecarPath(path);
  UniqueFd out(OpenNoEintr(sidecar, O_WRONLY | O_CREAT | O_TRUNC, 0600));
  if (out.get() < 0) return ErrnoError(errno, "cannot write the marker file", sidecar);
  if (write(out.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size()) ||
      fsync(out.get()) != 0) {
    return ErrnoError(errno, "cannot write the marker file", sidecar);
  }
  return {};
}

Result<void> LayOutProbeFile(int fd, const std::string& path, uint64_t filled, uint64_t required,
                             uint32_t alignment) {
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
  return WriteProbeFileMarker(fd, path, required);
}

}  // namespace iowatch::probes
