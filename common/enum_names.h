// One table per enum of its values' names (fio's posval): ToString and the
// parse of the text both read it, so a spelling is written once, and help and
// errors list exactly the names the parser takes.
// Thread-safety: constants and pure functions.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace iowatch {

template <typename E>
struct EnumName {
  E value;
  std::string_view name;
};

// The name of `value`; "?" for a value the table does not hold (one cast
// from outside the enum).
template <typename E>
constexpr std::string_view NameIn(std::span<const EnumName<E>> table, E value) {
  for (const EnumName<E>& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

template <typename E>
constexpr std::optional<E> ValueIn(std::span<const EnumName<E>> table, std::string_view name) {
  for (const EnumName<E>& entry : table) {
    if (entry.name == name) return entry.value;
  }
  return std::nullopt;
}

// The names in table order: "a, b, c" (separator ", "), or "a, b or c" with
// `last` " or ".
template <typename E>
std::string NamesIn(std::span<const EnumName<E>> table, std::string_view separator,
                    std::string_view last = {}) {
  std::string out;
  for (size_t i = 0; i < table.size(); ++i) {
    if (i > 0) out += (i + 1 == table.size() && !last.empty()) ? last : separator;
    out += table[i].name;
  }
  return out;
}

}  // namespace iowatch
