#include "common/whole_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <utility>

namespace iowatch {
namespace {

// Closes the descriptor it holds.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // close(2)'s own result: NFS reports a failed write there.
  int Close() { return ::close(std::exchange(fd_, -1)); }

 private:
  int fd_;
};

int OpenRetrying(int dir_fd, const char* name, int flags, mode_t mode = 0) {
  int fd = -1;
  do {
    fd = ::openat(dir_fd, name, flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// All of `text`, through short writes and signals; errno on false.
bool WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// A pipe, a FIFO or a terminal the user named: written as it is.
Status WriteInPlace(const std::string& path, std::string_view text) {
  Fd file(OpenRetrying(AT_FDCWD, path.c_str(), O_WRONLY | O_TRUNC | O_NOCTTY));
  if (file.get() < 0) return ErrnoError(errno, "cannot create", path);
  if (!WriteAll(file.get(), text) || file.Close() != 0) {
    return ErrnoError(errno, "cannot write", path);
  }
  return {};
}

// A name for the temporary file that no other writer picks: the target's,
// with random hex and ".tmp" (a crash's leftover tells whose it was).
std::string TemporaryName(const std::string& name, unsigned attempt) {
  uint64_t random = 0;
  if (::getrandom(&random, sizeof random, GRND_NONBLOCK) != sizeof random) {
    // No entropy yet (early boot): the process, the time and the attempt.
    random = (static_cast<uint64_t>(::getpid()) << 32) ^ attempt ^
             static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  return fmt::format("{}.{:016x}.tmp", name, random);
}

// The temporary file, created new (O_EXCL: never an existing file, nor a
// symlink's target), mode 0666 less the umask as an ordinary create; its
// name in `temporary`.
Result<int> CreateTemporary(int dir_fd, const std::string& name, const std::string& path,
                            std::string& temporary) {
  for (unsigned attempt = 0;; ++attempt) {
    temporary = TemporaryName(name, attempt);
    const int fd = OpenRetrying(dir_fd, temporary.c_str(),
                                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST || attempt == 16) {
      return ErrnoError(errno, "cannot create a temporary file beside it", path);
    }
  }
}

// Written beside, synced, renamed over, the directory synced.
Status Replace(const std::string& path, std::string_view text) {
  const std::filesystem::path target(path);
  const std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") {
    return MakeError(ErrorCode::kInvalidArgument, "cannot create: expected a file name", path);
  }
  const std::string directory =
      target.has_parent_path() ? target.parent_path().string() : std::string(".");
  Fd dir(OpenRetrying(AT_FDCWD, directory.c_str(), O_RDONLY | O_DIRECTORY));
  if (dir.get() < 0) return ErrnoError(errno, "cannot create: the directory " + directory, path);
  std::string temporary;
  const auto created = CreateTemporary(dir.get(), name, path, temporary);
  if (!created) return ErrorOf(created);
  Fd file(*created);
  const std::string temporary_path = (target.parent_path() / temporary).string();
  // The clean-up's own failure would hide the error that matters.
  const auto failed = [&](int err, const std::string& what) {
    (void)::unlinkat(dir.get(), temporary.c_str(), 0);
    return ErrnoError(err, what, temporary_path);
  };
  if (!WriteAll(file.get(), text)) return failed(errno, "cannot write");
  // Before the rename: after a power loss the name holds the new text or the
  // old, not an empty file the rename reached the disk before.
  if (::fsync(file.get()) != 0) return failed(errno, "cannot sync");
  if (file.Close() != 0) return failed(errno, "cannot write");
  if (::renameat(dir.get(), temporary.c_str(), dir.get(), name.c_str()) != 0) {
    return failed(errno, "cannot rename it to " + path);
  }
  // The rename itself: until then a power loss may bring the old file back.
  if (::fsync(dir.get()) != 0 && errno != EINVAL) {
    return ErrnoError(errno, "cannot sync its directory", path);
  }
  return {};
}

}  // namespace

Status WriteWholeFile(const std::string& path, std::string_view text,
                      const WholeFileOptions& options) {
  struct stat info {};
  if (!options.replace_only && ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    if (S_ISBLK(info.st_mode)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "cannot write: expected a regular file, a pipe or a terminal, found a "
                       "block device",
                       path);
    }
    return WriteInPlace(path, text);
  }
  return Replace(path, text);
}

}  // namespace iowatch
