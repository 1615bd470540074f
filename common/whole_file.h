// Writing a whole file so that it is either the new text or what was there
// before, never half of it (a full disk, a killed process): the text goes to
// PATH.tmp beside it, which is renamed over. A path that is not a regular
// file (/dev/stdout, a pipe) is written in place.
// Thread-safety: pure functions (two writers of one path race as renames do).
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace iowatch {

Status WriteWholeFile(const std::string& path, std::string_view text);

}  // namespace iowatch
