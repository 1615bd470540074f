// One table per enum of its values' names (fio's posval): ToString and the
// parse of the text both read it, so a spelling is written once, and help and
// errors list exactly the names the parser takes.
// Thread-safety: constants and pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

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

// Whether `kValue` is an enumerator of its enum: GCC and Clang spell a value
// that has no name as a cast, "kValue = (ns::E)5", in __PRETTY_FUNCTION__
// (the technique of magic_enum).
template <auto kValue>
constexpr bool IsEnumerator() {
  constexpr std::string_view kSignature = __PRETTY_FUNCTION__;
  constexpr std::string_view kMarker = "kValue = ";
  constexpr size_t kAt = kSignature.find(kMarker);
  static_assert(kAt != std::string_view::npos, "a compiler that spells templates otherwise");
  return kSignature[kAt + kMarker.size()] != '(';
}

// Whether `kTable` names every value of its enum, each once (in any order),
// for an enum whose enumerators are 0, 1, ... N-1 (none with an explicit
// value): the N entries hold N distinct values below N, and N is no
// enumerator. A static_assert of it beside the table checks what -Wswitch
// checks of a switch: an enumerator added without its name stops the build.
template <const auto& kTable>
constexpr bool NamesEveryValue() {
  using E = std::remove_cvref_t<decltype(kTable[0].value)>;
  constexpr size_t kCount = std::size(kTable);
  std::array<bool, kCount> named{};
  for (size_t i = 0; i < kCount; ++i) {
    const auto value = static_cast<size_t>(kTable[i].value);
    if (value >= kCount || named[value]) return false;
    named[value] = true;
  }
  return !IsEnumerator<static_cast<E>(kCount)>();
}

// NamesIn at compile time, for text that must be a constant (an option
// table's row): the names of `kTable` (a std::array of EnumName) joined by
// kSeparator and followed by kSuffix. Without kAliases, only each value's
// first spelling is listed (a table may spell a value twice: fio's "rw" and
// "readwrite").
inline constexpr char kNoSuffix[] = "";
template <const auto& kTable, const char* kSeparator, bool kAliases,
          const char* kSuffix = kNoSuffix>
class JoinedNames {
  static constexpr bool Listed(size_t i) {
    for (size_t j = 0; !kAliases && j < i; ++j) {
      if (kTable[j].value == kTable[i].value) return false;
    }
    return true;
  }
  static constexpr size_t Size() {
    size_t size = std::string_view(kSuffix).size();
    for (size_t i = 0, listed = 0; i < kTable.size(); ++i) {
      if (!Listed(i)) continue;
      size += (listed++ > 0 ? std::string_view(kSeparator).size() : 0) + kTable[i].name.size();
    }
    return size;
  }
  static constexpr std::array<char, Size()> Chars() {
    std::array<char, Size()> out{};
    size_t at = 0;
    const auto append = [&](std::string_view text) {
      for (const char c : text) out[at++] = c;
    };
    for (size_t i = 0, listed = 0; i < kTable.size(); ++i) {
      if (!Listed(i)) continue;
      if (listed++ > 0) append(kSeparator);
      append(kTable[i].name);
    }
    append(kSuffix);
    return out;
  }
  static constexpr std::array<char, Size()> kChars = Chars();

 public:
  static constexpr std::string_view kText{kChars.data(), kChars.size()};
};

}  // namespace iowatch
