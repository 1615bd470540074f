// Parser for /proc/meminfo (proc(5)): "Name:   value kB" lines. Values are
// kept as printed: KiB for fields with a "kB" unit, plain counts for the
// HugePages_* fields; `in_kib` tells which.
// Thread-safety: pure function.
#pragma once

#include <string_view>

#include "collectors/named_values.h"

namespace iowatch::collectors {

struct Meminfo {
  NamedValues values;
  std::vector<bool> in_kib;  // parallel to values.entries: true when the line had "kB"
};

Meminfo ParseMeminfo(std::string_view text, std::string_view path);

}  // namespace iowatch::collectors
