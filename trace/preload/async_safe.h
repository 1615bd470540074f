// Text the trace library builds where a signal handler may be running: no
// printf (its locale and allocation), no std::string; bytes into a buffer
// the caller owns.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace iowatch::trace {

// `value` in decimal at `out` (20 bytes at most); its length.
inline size_t FormatDecimal(uint64_t value, char* out) {
  char digits[20];
  size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  for (size_t i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
  return n;
}

// `text` at `out`; its length.
inline size_t Copy(std::string_view text, char* out) {
  for (size_t i = 0; i < text.size(); ++i) out[i] = text[i];
  return text.size();
}

}  // namespace iowatch::trace
