// Small helpers every procfs parser shares: split a file into lines, a line
// into whitespace-separated fields, and parse unsigned decimal numbers
// strictly (no sign, no trailing garbage), so each parser stays about its
// format and not about characters.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace iowatch::collectors {

// Calls fn(line, line_number) for each line (1-based), without the newline.
template <typename Fn>
void ForEachLine(std::string_view text, Fn&& fn) {
  int line_number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    fn(line, ++line_number);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

// Splits on spaces and tabs into `out` without allocating; empty fields are
// never produced. Returns the number of fields in the line, which may exceed
// out.size() (the extra fields are counted, not stored).
inline size_t SplitFieldsInto(std::string_view line, std::span<std::string_view> out) {
  size_t count = 0;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) {
      if (count < out.size()) out[count] = line.substr(start, i - start);
      ++count;
    }
  }
  return count;
}

// Splits on spaces and tabs; empty fields are never produced.
inline std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

// Decimal digits only, overflow rejected. A hand loop: this is the hot path
// of every procfs parser (about 20 numbers per diskstats line).
inline std::optional<uint64_t> ParseU64(std::string_view s) {
  if (s.empty()) return std::nullopt;
  uint64_t value = 0;
  for (const char c : s) {
    const unsigned digit = static_cast<unsigned char>(c) - static_cast<unsigned>('0');
    if (digit > 9) return std::nullopt;
    if (__builtin_mul_overflow(value, 10u, &value) ||
        __builtin_add_overflow(value, digit, &value)) {
      return std::nullopt;
    }
  }
  return value;
}

}  // namespace iowatch::collectors
