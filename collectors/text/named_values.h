// NamedValues: the ordered (name, value) pairs of a key-value procfs file
// (/proc/meminfo, /proc/vmstat), kept in file order so exporters can emit
// every field, with lookup by name for the derivations.
// Thread-safety: plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace iowatch::collectors {

struct NamedValues {
  std::vector<std::pair<std::string, uint64_t>> entries;
  std::vector<Error> skipped;  // malformed lines, with line numbers

  std::optional<uint64_t> Get(std::string_view name) const {
    for (const auto& [key, value] : entries) {
      if (key == name) return value;
    }
    return std::nullopt;
  }
  uint64_t GetOr(std::string_view name, uint64_t fallback) const {
    return Get(name).value_or(fallback);
  }
};

}  // namespace iowatch::collectors
