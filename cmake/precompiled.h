// The headers most of iowatch's files include, parsed once per build tree
// instead of once per unity batch (cmake/precompiled_headers.cmake). Only
// the standard library and fmt: a header here is in every unit's scope, so
// nothing project-specific, and nothing that costs more to load than most
// units would spend parsing it.
#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>
