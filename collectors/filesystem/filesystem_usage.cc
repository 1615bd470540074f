#include "collectors/filesystem/filesystem_usage.h"

#include <utility>

namespace iowatch::collectors {

FilesystemUsage UsageOfStatfs(const struct statfs& s) {
  const uint64_t unit = static_cast<uint64_t>(s.f_frsize != 0 ? s.f_frsize : s.f_bsize);
  return FilesystemUsage{s.f_blocks * unit, s.f_bfree * unit, s.f_bavail * unit, s.f_files,
                         s.f_ffree};
}

FilesystemUsageBatchReader OneByOne(FilesystemUsageReader read) {
  return [read = std::move(read)](std::span<const std::string> paths,
                                  const FilesystemUsageAnswer& answer) {
    for (size_t i = 0; i < paths.size(); ++i) {
      if (!answer(i, read(paths[i]))) return;
    }
  };
}

}  // namespace iowatch::collectors
