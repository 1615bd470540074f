// DeviceFilter: which devices to report, by name, with ECMAScript regular
// expressions matched against the whole name. A device is kept when it
// matches the include pattern (if any) and does not match the exclude pattern
// (if any). Invalid patterns are reported at construction, never at match time.
// Thread-safety: immutable after construction; Matches is safe from any thread.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <string_view>

#include "common/result.h"

namespace iowatch::collectors {

class DeviceFilter {
 public:
  // Empty strings mean "no include filter" / "no exclude filter".
  static Result<DeviceFilter> Create(const std::string& include, const std::string& exclude);
  DeviceFilter() = default;

  bool Matches(std::string_view device_name) const;

 private:
  std::optional<std::regex> include_;
  std::optional<std::regex> exclude_;
};

}  // namespace iowatch::collectors
