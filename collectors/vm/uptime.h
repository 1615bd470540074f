// Parser for /proc/uptime (proc(5)): "<seconds since boot>.<cc> <idle seconds>".
// sysstat measures every interval as the difference of the first field in
// centiseconds (parsed as "%lu.%lu"); iowatch does the same so that its rates
// match iostat's and fixture tests are deterministic.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::collectors {

// Seconds since boot in centiseconds (1/100 s), the kernel's printed resolution.
Result<uint64_t> ParseUptimeCentiseconds(std::string_view text, std::string_view path);

// <procfs>/uptime read and parsed.
Result<uint64_t> ReadUptimeCentiseconds(const FileTree& procfs);

}  // namespace iowatch::collectors
