#include "collectors/filesystem/filesystem_usage.h"

#include <sys/statvfs.h>

#include <cerrno>

namespace iowatch::collectors {

Result<FilesystemUsage> ReadFilesystemUsage(const std::string& path) {
  struct statvfs s {};
  if (statvfs(path.c_str(), &s) != 0) {
    return ErrnoError(errno, "statvfs of the mount point failed", path);
  }
  const uint64_t unit = s.f_frsize != 0 ? s.f_frsize : s.f_bsize;
  return FilesystemUsage{s.f_blocks * unit, s.f_bfree * unit, s.f_bavail * unit, s.f_files,
                         s.f_ffree};
}

}  // namespace iowatch::collectors
