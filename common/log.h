// spdlog, as the project's code includes it: compiled against Debian's
// libspdlog (the definitions its CMake target spdlog::spdlog carries), never
// header-only. Header-only, each unit compiles all of spdlog again (8 s at -O2
// against 1.2 s) and the binary carries a second copy of its code, whose
// logger registry is the library's only while the linker happens to merge the
// two. A target that includes this links spdlog::spdlog.
#pragma once

#if !defined(SPDLOG_COMPILED_LIB)
#error "spdlog would be compiled header-only here: link this target with spdlog::spdlog"
#endif

#include <spdlog/spdlog.h>  // IWYU pragma: export
