#include "collectors/filesystem/mount_table_watch.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace iowatch::collectors {

MountTableWatch::~MountTableWatch() { Close(); }

void MountTableWatch::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool MountTableWatch::Open(const std::filesystem::path& path) {
  Close();
  path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0 || fs.f_type != PROC_SUPER_MAGIC) {
    ::close(fd);
    return false;
  }
  fd_ = fd;
  return true;
}

bool MountTableWatch::Changed(const std::filesystem::path& path, Clock::time_point now) {
  if (fd_ < 0 || path != path_) {
    // A table first seen: read it (the open file's events start from now).
    Open(path);
    read_at_ = now;
    return true;
  }
  pollfd p{.fd = fd_, .events = POLLPRI, .revents = 0};
  const bool event = ::poll(&p, 1, 0) != 0;  // an error too: read, to be sure
  if (!event && now - read_at_ < kMaxAge) return false;
  read_at_ = now;
  return true;
}

}  // namespace iowatch::collectors
