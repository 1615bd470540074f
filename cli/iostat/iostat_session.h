// IostatSession: the output of one `iowatch iostat` run as a function of its
// samples. It turns the options into a device selection and a layout, and
// each new sample into the next report (text or JSON), with sysstat's
// since-boot first report, -y, and its separators. It does no I/O and reads
// no clock itself, so tests drive it with fixture samples and compare the
// whole output with what sysstat printed for the same samples.
// Thread-safety: one session per thread.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "cli/iostat/iostat_format.h"
#include "cli/iostat/iostat_options.h"
#include "cli/iostat/iostat_report.h"
#include "cli/shared/host_info.h"
#include "collectors/disk/disk_sample.h"
#include "collectors/vm/proc_stat.h"

namespace iowatch::daemon {

// Everything one report is computed from, read in sysstat's order: uptime,
// /proc/stat, then the disks.
struct IostatSample {
  collectors::DiskSample disks;
  collectors::CpuTicks cpu;
  collectors::BlockTopology topology;
};

// `previous`, when given, lets the sysfs topology be reused while the set of
// devices in /proc/diskstats has not changed (sysfs is walked only on hotplug).
Result<IostatSample> ReadIostatSample(const FileTree& procfs, const FileTree& sysfs,
                                      const IostatSample* previous = nullptr);

// strftime of "now"; injected so that tests are deterministic.
using TimeFormatter = std::function<std::string(const char* strftime_format)>;

class IostatSession {
 public:
  // `posixly_correct` and `iso_time` mirror sysstat's POSIXLY_CORRECT and
  // S_TIME_FORMAT=ISO environment switches.
  IostatSession(const IostatOptions& options, HostInfo host, TimeFormatter now,
                bool posixly_correct, bool iso_time);

  // Banner and, unless -y with an interval, the since-boot report.
  std::string Start(IostatSample first);
  // The report over the interval since the previous sample.
  std::string Next(IostatSample sample);
  // What closes the output (the end of the JSON document).
  std::string Finish() const;

  // The last sample given, if any.
  const IostatSample* previous() const { return previous_ ? &*previous_ : nullptr; }

 private:
  IostatReport MakeReport(const IostatSample* prev, const IostatSample& cur) const;
  std::string Format(const IostatReport& report);

  IostatOptions options_;
  HostInfo host_;
  TimeFormatter now_;
  bool iso_time_;
  IostatLayout layout_;
  IostatSelection selection_;
  IostatTextFormatter text_;
  IostatJsonFormatter json_;
  std::optional<IostatSample> previous_;
};

}  // namespace iowatch::daemon
