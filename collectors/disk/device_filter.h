// DeviceFilter: which devices to report, by name, with regular expressions
// (RE2 syntax, see common/name_pattern.h) matched against the whole name. A
// device is kept when it matches the include pattern (if any) and does not
// match the exclude pattern (if any). Invalid patterns are reported at
// construction, never at match time.
// Thread-safety: immutable after construction; Matches is safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/name_pattern.h"
#include "common/result.h"

namespace iowatch::collectors {

class DeviceFilter {
 public:
  // Empty strings mean "no include filter" / "no exclude filter".
  static Result<DeviceFilter> Create(const std::string& include, const std::string& exclude);
  DeviceFilter() = default;

  bool Matches(std::string_view device_name) const;

 private:
  std::optional<NamePattern> include_;
  std::optional<NamePattern> exclude_;
};

}  // namespace iowatch::collectors
