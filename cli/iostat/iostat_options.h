// The command line of `iowatch iostat`: sysstat 12.6's everyday options, with
// its rules (combined letters "-xz", "-p" with an optional device list that a
// number or an option does not count as, device names and "ALL" among the
// positional arguments, then [interval [count]]).
// Thread-safety: pure function.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace iowatch::daemon {

enum class SizeUnit { kKilobytes, kMegabytes };

struct IostatOptions {
  bool show_cpu = true;
  bool show_devices = true;
  bool extended = false;         // -x
  std::optional<SizeUnit> unit;  // -k / -m; none: kB, or sectors under POSIXLY_CORRECT
  bool dm_names = false;         // -N
  bool partitions = false;       // -p given
  bool partitions_all = false;   // "-p ALL" (a bare -p is partitions without this)
  std::vector<std::string> partition_devices;  // -p sda,sdb
  bool skip_since_boot = false;                // -y
  bool omit_inactive = false;                  // -z
  bool timestamp = false;                      // -t
  bool json = false;                           // -o JSON
  bool all_devices = false;                    // "ALL": include devices that never did I/O
  std::vector<std::string> devices;            // named on the command line
  std::optional<long> interval_s;              // none: one since-boot report
  std::optional<long> count;                   // none with an interval: forever
};

// `args` excludes the subcommand itself. Errors name the offending argument.
Result<IostatOptions> ParseIostatArgs(const std::vector<std::string>& args);

}  // namespace iowatch::daemon
