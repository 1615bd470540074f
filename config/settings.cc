#include "config/settings.h"

#include <cmath>

#include "config/values.h"

namespace iowatch::config {
namespace {

uint32_t Bound(double value) {
  return value <= 0 ? 0u : static_cast<uint32_t>(std::min(value, 4294967295.0));
}

// A value of the row's type: what a default that does not parse stands for.
SettingValue ZeroOf(SettingType type) {
  switch (type) {
    case SettingType::kBool:
      return false;
    case SettingType::kDuration:
      return std::chrono::milliseconds(0);
    case SettingType::kRegex:
    case SettingType::kPath:
      return std::string();
    case SettingType::kInteger:
      return uint32_t{0};
    case SettingType::kNumber:
      return 0.0;
  }
  return false;
}

template <typename T>
Result<SettingValue> Widen(Result<T> value) {
  if (!value) return ErrorOf(value);
  return SettingValue(std::move(*value));
}

}  // namespace

Result<SettingValue> ParseSetting(const Setting& setting, std::string_view text) {
  switch (setting.type) {
    case SettingType::kBool:
      return Widen(ParseBool(text));
    case SettingType::kDuration:
      return Widen(ParseDurationBetween(
          text, std::chrono::milliseconds(static_cast<int64_t>(std::llround(setting.min))),
          kMaxConfigDuration));
    case SettingType::kRegex:
      return Widen(ParseRegex(text));
    case SettingType::kInteger:
      return Widen(ParseInteger(text, Bound(setting.min), Bound(setting.max)));
    case SettingType::kNumber:
      return Widen(ParseNumber(text, setting.min, setting.max, true));
    case SettingType::kPath:
      return Widen(ParsePath(text));
  }
  return MakeError(ErrorCode::kInvalidArgument, "unknown setting type");
}

void SettingValues::Set(const Setting& setting, SettingValue value) {
  if (value == DefaultOf(setting)) {
    values_.erase(std::string(setting.key));
  } else {
    values_.insert_or_assign(std::string(setting.key), std::move(value));
  }
}

SettingValue SettingValues::DefaultOf(const Setting& setting) {
  auto value = ParseSetting(setting, setting.default_value);
  return value ? std::move(*value) : ZeroOf(setting.type);
}

}  // namespace iowatch::config
