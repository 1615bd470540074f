// Parser for /proc/meminfo (proc(5)): "Name:   value kB" lines. Values are
// kept as printed: KiB for fields with a "kB" unit, plain counts for the
// HugePages_* fields; `in_kib` tells which.
// Thread-safety: pure function.
#pragma once

#include <string_view>

#include "collectors/text/named_values.h"
#include "common/result.h"

namespace iowatch::collectors {

struct Meminfo {
  NamedValues values;
  std::vector<bool> in_kib;  // parallel to values.entries: true when the line had "kB"
};

Meminfo ParseMeminfo(std::string_view text, std::string_view path);

// An error unless at least one line parsed: procps' vmstat refuses such a
// file ("Unable to create meminfo structure", exit 1) rather than printing
// zeros, and so do `iowatch vmstat` and the vm source (its meminfo collector).
Status CheckMeminfoUsable(const Meminfo& meminfo, std::string_view path);

}  // namespace iowatch::collectors
