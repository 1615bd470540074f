// The one strict parser of whole decimal numbers in text iowatch reads
// (command-line values, job options, its own marker files, sysfs
// attributes): digits only — no sign, space, "0x" or suffix — the whole
// text, overflow rejected. The procfs parsers' hot loop is
// collectors/text/text_scan.h's ParseU64, which means the same.
// Thread-safety: pure functions.
#pragma once

#include <cctype>
#include <charconv>
#include <concepts>
#include <optional>
#include <string_view>

namespace iowatch {

template <std::unsigned_integral T>
std::optional<T> ParseDecimal(std::string_view text) {
  T value{};
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
  if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

// A sysfs attribute's number: the text with its one trailing newline.
template <std::unsigned_integral T>
std::optional<T> ParseDecimalLine(std::string_view text) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  return ParseDecimal<T>(text);
}

}  // namespace iowatch
