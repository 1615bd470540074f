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

}  // namespace iowatch::probes
