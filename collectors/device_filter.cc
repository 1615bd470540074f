#include "collectors/device_filter.h"

namespace iowatch::collectors {
namespace {

Result<std::optional<std::regex>> Compile(const std::string& pattern, std::string_view what) {
  if (pattern.empty()) return std::optional<std::regex>();
  try {
    return std::optional<std::regex>(std::regex(pattern, std::regex::ECMAScript));
  } catch (const std::regex_error& e) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("invalid {} device pattern '{}': {}", what, pattern, e.what()));
  }
}

}  // namespace

Result<DeviceFilter> DeviceFilter::Create(const std::string& include, const std::string& exclude) {
  auto inc = Compile(include, "include");
  if (!inc) return std::unexpected(inc.error());
  auto exc = Compile(exclude, "exclude");
  if (!exc) return std::unexpected(exc.error());
  DeviceFilter filter;
  filter.include_ = std::move(*inc);
  filter.exclude_ = std::move(*exc);
  return filter;
}

bool DeviceFilter::Matches(std::string_view device_name) const {
  const auto begin = device_name.begin();
  const auto end = device_name.end();
  if (include_ && !std::regex_match(begin, end, *include_)) return false;
  if (exclude_ && std::regex_match(begin, end, *exclude_)) return false;
  return true;
}

}  // namespace iowatch::collectors
