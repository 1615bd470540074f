// Settings that a part of the daemon declares in its own folder rather than
// in config.h: each is one row (its dotted key, its type, its default as the
// bundled config/iowatch.yaml writes it, its bounds), and the loader reads
// the rows it is given beside its own schema, with the same strictness and
// the same file:line:column errors. A source of the sample lists its rows
// in its descriptor (daemon/sources/), so adding a source with settings
// edits neither config.h nor the loader.
// A SettingValues holds the values a file set that differ from their rows'
// defaults; a key it does not hold has its row's default.
// Thread-safety: plain values; safe from any thread once built.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "common/result.h"

namespace iowatch::config {

enum class SettingType {
  kBool,      // true or false
  kDuration,  // "500ms", "15m": from `min` milliseconds to kMaxConfigDuration
  kRegex,     // an RE2 pattern, "" for none (ParseRegex)
  kInteger,   // decimal digits from `min` to `max`
  kNumber,    // a decimal number from `min` to `max`
  kPath,      // a non-empty path or command name without NUL bytes (ParsePath)
};

struct Setting {
  std::string_view key;  // "collectors.scsi.enabled"
  SettingType type = SettingType::kBool;
  std::string_view default_value;  // as the bundled file writes it: "true", "10m"
  double min = 0;
  double max = 0;
};

// A row by its type, one line each where a source declares it.
constexpr Setting BoolSetting(std::string_view key, std::string_view default_value) {
  return {.key = key, .type = SettingType::kBool, .default_value = default_value};
}
// A duration of at least `min_ms` milliseconds.
constexpr Setting DurationSetting(std::string_view key, std::string_view default_value,
                                  double min_ms) {
  return {
      .key = key, .type = SettingType::kDuration, .default_value = default_value, .min = min_ms};
}
constexpr Setting RegexSetting(std::string_view key, std::string_view default_value = "") {
  return {.key = key, .type = SettingType::kRegex, .default_value = default_value};
}
// A program's path, or its name looked up in PATH ("dmsetup").
constexpr Setting PathSetting(std::string_view key, std::string_view default_value) {
  return {.key = key, .type = SettingType::kPath, .default_value = default_value};
}

// bool, a duration, a pattern or path, an integer or a number, by the row's type.
using SettingValue = std::variant<bool, std::chrono::milliseconds, std::string, uint32_t, double>;

// `text` as the row's type reads it, or what was expected.
Result<SettingValue> ParseSetting(const Setting& setting, std::string_view text);

class SettingValues {
 public:
  // What the file set for `setting`, else its default. The row's type
  // decides T: bool for kBool, std::chrono::milliseconds for kDuration,
  // std::string for kRegex and kPath, uint32_t for kInteger, double for
  // kNumber.
  template <typename T>
  T Get(const Setting& setting) const {
    const auto it = values_.find(setting.key);
    if (it != values_.end()) return std::get<T>(it->second);
    return std::get<T>(DefaultOf(setting));
  }
  // A value equal to the row's default is not held: two SettingValues are
  // equal when every setting has the same value (a reload that changes
  // nothing compares equal).
  void Set(const Setting& setting, SettingValue value);
  bool operator==(const SettingValues&) const = default;

 private:
  // The row's default, parsed (a row whose default does not parse is a
  // programming error: every registered row is tested).
  static SettingValue DefaultOf(const Setting& setting);

  std::map<std::string, SettingValue, std::less<>> values_;
};

}  // namespace iowatch::config
