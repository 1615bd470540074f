// HostInfo: what the sysstat banner and JSON header say about the machine
// (uname fields and the CPU count), read once. Kept separate from printing so
// golden tests can pass a fixed host.
// Thread-safety: plain value; ReadHostInfo is safe from any thread.
#pragma once

#include <string>

#include "common/file_tree.h"

namespace iowatch::daemon {

struct HostInfo {
  std::string sysname;
  std::string nodename;
  std::string release;
  std::string machine;
  int cpu_count = 0;  // cpu[0-9]* directories under <sysfs>/devices/system/cpu, as sysstat counts
};

HostInfo ReadHostInfo(const FileTree& sysfs);

}  // namespace iowatch::daemon
