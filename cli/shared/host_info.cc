#include "cli/shared/host_info.h"

#include <sys/utsname.h>

#include <algorithm>

namespace iowatch::daemon {

HostInfo ReadHostInfo(const FileTree& sysfs) {
  HostInfo host;
  struct utsname u {};
  if (::uname(&u) == 0) {
    host.sysname = u.sysname;
    host.nodename = u.nodename;
    host.release = u.release;
    host.machine = u.machine;
  }
  const auto entries = sysfs.List("devices/system/cpu");
  if (entries) {
    host.cpu_count = static_cast<int>(
        std::count_if(entries->begin(), entries->end(), [](const std::string& name) {
          return name.size() > 3 && name.starts_with("cpu") &&
                 std::all_of(name.begin() + 3, name.end(),
                             [](char c) { return c >= '0' && c <= '9'; });
        }));
  }
  return host;
}

}  // namespace iowatch::daemon
