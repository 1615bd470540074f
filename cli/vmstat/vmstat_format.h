// Formatting of vmstat lines, byte for byte as procps-ng 4.0.2 prints them:
// the two header lines (normal or -w wide, -a labels, -t time-zone column)
// and one data line per sample. Values wider than their column push the rest
// of the line right, as printf does.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "collectors/vm/vmstat.h"

namespace iowatch::daemon {

struct VmstatLayout {
  bool wide = false;
  bool active = false;     // -a
  bool timestamp = false;  // -t
};

// `time_zone` is strftime("%Z"), used only with -t.
std::string VmstatHeader(const VmstatLayout& layout, const std::string& time_zone);

// `timestamp` is "YYYY-MM-DD HH:MM:SS", used only with -t.
std::string VmstatLine(const VmstatLayout& layout, const collectors::VmstatColumns& c,
                       const std::string& timestamp);

}  // namespace iowatch::daemon
