#include "probes/target/page_cache.h"

#include <fcntl.h>
#include <unistd.h>

namespace iowatch::probes {

void DropCachedPages(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  (void)fdatasync(fd);  // dirty pages are not dropped: write them first
  (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
}

}  // namespace iowatch::probes
