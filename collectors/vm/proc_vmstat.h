// Parser for /proc/vmstat: "name value" lines of the kernel's virtual memory
// counters (mm/vmstat.c vmstat_text). Page counts are in pages except
// pgpgin/pgpgout, which the kernel already reports in KiB.
// Thread-safety: pure function.
#pragma once

#include <string_view>

#include "collectors/text/named_values.h"

namespace iowatch::collectors {

NamedValues ParseProcVmstat(std::string_view text, std::string_view path);

}  // namespace iowatch::collectors
