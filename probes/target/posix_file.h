// Small POSIX file helpers shared by the code that prepares probe targets
// (probe_target.cc, probe_file_layout.cc): a descriptor owner, open(2)
// retried on EINTR, errors that name a path, and the alignment of the
// buffers used for direct I/O.
// Thread-safety: UniqueFd has one owner; the functions are reentrant.
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

#include "common/result.h"

namespace iowatch::probes {

// Buffers aligned to a page satisfy every direct-I/O memory alignment a
// kernel asks for and never straddle more pages than needed.
inline constexpr uint32_t kPageBytes = 4096;

// Closes the descriptor it owns.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) close(fd_);
      fd_ = other.release();
    }
    return *this;
  }
  ~UniqueFd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// open(2) with O_CLOEXEC, retried while a signal interrupts it; -1 and errno
// on failure.
inline int OpenNoEintr(const std::string& path, int flags, mode_t mode = 0) {
  int fd = -1;
  do {
    fd = open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// openat(2) of one name in an open directory with O_CLOEXEC and O_NOFOLLOW
// (a symlink as the last component fails with ELOOP), retried while a signal
// interrupts it; -1 and errno on failure.
inline int OpenAtNoFollow(int dir_fd, const std::string& name, int flags, mode_t mode = 0) {
  int fd = -1;
  do {
    fd = openat(dir_fd, name.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// An error about `path` with the message as given (ErrnoError appends
// strerror; this does not) and, when known, the errno behind it.
inline std::unexpected<Error> PathError(ErrorCode code, std::string message, std::string path,
                                        int os_errno = 0) {
  Error error;
  error.code = code;
  error.message = std::move(message);
  error.path = std::move(path);
  error.os_errno = os_errno;
  return std::unexpected<Error>(std::move(error));
}

// The directory holding `path`; "." for a bare file name.
inline std::string ParentDirectory(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// A probe file and its directory, opened once: everything iowatch creates,
// marks, fills or removes there is reached through this descriptor with
// openat/renameat/unlinkat and O_NOFOLLOW, so neither a symlink planted as
// the file (or its marker) nor a directory swapped for a symlink in between
// leads it to a file it did not create.
class ProbeFilePath {
 public:
  // Opens the directory holding `path`; kNotFound naming it when it is not one.
  static Result<ProbeFilePath> Open(const std::string& path) {
    const std::string directory = ParentDirectory(path);
    UniqueFd dir(OpenNoEintr(directory, O_RDONLY | O_DIRECTORY));
    if (dir.get() < 0 && (errno == ENOENT || errno == ENOTDIR)) {
      return PathError(ErrorCode::kNotFound,
                       "cannot create: the directory " + directory + " does not exist", path,
                       ENOENT);
    }
    if (dir.get() < 0) return ErrnoError(errno, "cannot open", directory);
    return ProbeFilePath(std::move(dir), std::filesystem::path(path).filename().string(), path);
  }

  int dir_fd() const { return dir_.get(); }
  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  std::string directory() const { return ParentDirectory(path_); }

  // OpenAtNoFollow of the file itself.
  int OpenFile(int flags, mode_t mode = 0) const {
    return OpenAtNoFollow(dir_fd(), name_, flags, mode);
  }

 private:
  ProbeFilePath(UniqueFd dir, std::string name, std::string path)
      : dir_(std::move(dir)), name_(std::move(name)), path_(std::move(path)) {}
  UniqueFd dir_;
  std::string name_;
  std::string path_;
};

}  // namespace iowatch::probes
