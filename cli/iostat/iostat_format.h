// Formatting of iostat reports, byte for byte as sysstat 12.6 prints them:
// the text layout (banner, avg-cpu block, basic or extended device table) and
// the JSON document of `-o JSON`. Formatters only build strings; the command
// decides when to write them, so golden tests need no process.
// Numbers are formatted with the C locale whatever the user's locale.
// Thread-safety: a formatter is used by one thread; JSON keeps state between
// reports (the separating commas).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/iostat/iostat_report.h"
#include "cli/shared/host_info.h"
#include "collectors/disk/iostat.h"

namespace iowatch::daemon {

enum class IostatUnit { kKilobytes, kMegabytes, kSectors };  // kSectors: POSIXLY_CORRECT blocks

struct IostatLayout {
  bool extended = false;
  IostatUnit unit = IostatUnit::kKilobytes;
  bool show_cpu = true;
  bool show_devices = true;
};

// One report: what the formatter prints for one sample pair.
struct IostatReport {
  std::optional<std::string> timestamp;  // -t, already formatted
  collectors::CpuUsage cpu;
  std::vector<IostatDeviceRow> devices;
  std::vector<std::string> display_names;  // parallel to devices (-N may replace dm-N)
};

class IostatTextFormatter {
 public:
  explicit IostatTextFormatter(IostatLayout layout) : layout_(layout) {}
  std::string Banner(const HostInfo& host, const std::string& date) const;
  std::string Report(const IostatReport& report) const;

 private:
  IostatLayout layout_;
};

class IostatJsonFormatter {
 public:
  explicit IostatJsonFormatter(IostatLayout layout) : layout_(layout) {}
  std::string Begin(const HostInfo& host, const std::string& date) const;
  std::string Report(const IostatReport& report);
  std::string End() const;

 private:
  IostatLayout layout_;
  bool first_report_ = true;
};

}  // namespace iowatch::daemon
