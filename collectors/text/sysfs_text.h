// One sysfs (or procfs) attribute read as text that may become a label
// value: trimmed, valid UTF-8, control characters as spaces (a firmware's
// model string can hold any byte, and an escape sequence must not reach a
// terminal or the exposition). Absent is nullopt, not an error, since
// attributes come and go with kernels and device kinds; any other read
// failure is an error naming the path. TakeSysfsRead moves such reads
// into a struct's fields one after the other, stopping at the first error.
// Thread-safety: pure function of the tree it is given.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/file_tree.h"
#include "common/result.h"
#include "common/utf8.h"

namespace iowatch::collectors {

inline std::string_view TrimSysfsText(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\n");
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(" \t\n");
  return text.substr(first, last - first + 1);
}

inline Result<std::optional<std::string>> ReadSysfsText(const FileTree& tree,
                                                        std::string_view relative) {
  const auto content = tree.Read(relative, kMaxSysfsAttributeBytes);
  if (!content && content.error().code == ErrorCode::kNotFound) return std::nullopt;
  if (!content) return ErrorOf(content);
  std::string text = ToValidUtf8(TrimSysfsText(*content));
  while (const std::optional<size_t> control = ControlCharacterAt(text)) text[*control] = ' ';
  return text;
}

// Moves a read's value into `out`, or its error into `error`: false on failure.
template <typename T>
bool TakeSysfsRead(Result<T>&& read, T& out, std::optional<Error>& error) {
  if (!read)
    error = read.error();
  else
    out = std::move(*read);
  return read.has_value();
}

}  // namespace iowatch::collectors
