#include "collectors/filesystem/filesystem_usage.h"

namespace iowatch::collectors {

FilesystemUsage UsageOfStatfs(const struct statfs& s) {
  const uint64_t unit = static_cast<uint64_t>(s.f_frsize != 0 ? s.f_frsize : s.f_bsize);
  return FilesystemUsage{s.f_blocks * unit, s.f_bfree * unit, s.f_bavail * unit, s.f_files,
                         s.f_ffree};
}

}  // namespace iowatch::collectors
