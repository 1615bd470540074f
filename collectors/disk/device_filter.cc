#include "collectors/disk/device_filter.h"

#include <fmt/format.h>

namespace iowatch::collectors {
namespace {

Result<std::optional<NamePattern>> Compile(const std::string& pattern, std::string_view what) {
  if (pattern.empty()) return std::optional<NamePattern>();
  auto compiled = NamePattern::Compile(pattern);
  if (!compiled) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} device pattern: {}", what, compiled.error().message));
  }
  return std::optional<NamePattern>(std::move(*compiled));
}

}  // namespace

Result<DeviceFilter> DeviceFilter::Create(const std::string& include, const std::string& exclude) {
  auto inc = Compile(include, "include");
  if (!inc) return ErrorOf(inc);
  auto exc = Compile(exclude, "exclude");
  if (!exc) return ErrorOf(exc);
  DeviceFilter filter;
  filter.include_ = std::move(*inc);
  filter.exclude_ = std::move(*exc);
  return filter;
}

bool DeviceFilter::Matches(std::string_view device_name) const {
  if (include_ && !include_->FullMatch(device_name)) return false;
  if (exclude_ && exclude_->FullMatch(device_name)) return false;
  return true;
}

}  // namespace iowatch::collectors
