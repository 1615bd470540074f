#include "common/terminal_text.h"

#include <cstdint>

#include "common/utf8.h"

namespace iowatch {
namespace {

void AppendByte(std::string& out, uint8_t byte) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 0xF];
}

// Whether the valid sequence text[i, i + length) is shown as bytes.
bool Unsafe(std::string_view text, size_t i, size_t length) {
  const auto byte = static_cast<uint8_t>(text[i]);
  if (length == 1) return byte < 0x20 || byte == 0x7F;
  // U+0080-U+009F, the C1 controls: 0xC2 then 0x80-0x9F.
  return length == 2 && byte == 0xC2 && static_cast<uint8_t>(text[i + 1]) <= 0x9F;
}

}  // namespace

void AppendTerminalText(std::string& out, std::string_view bytes) {
  for (size_t i = 0; i < bytes.size();) {
    const size_t length = Utf8SequenceLength(bytes, i);
    if (length == 0 || Unsafe(bytes, i, length)) {
      const size_t shown = length == 0 ? 1 : length;  // invalid: one byte at a time
      for (size_t k = 0; k < shown; ++k) AppendByte(out, static_cast<uint8_t>(bytes[i + k]));
      i += shown;
    } else if (bytes[i] == '\\') {
      out += "\\\\";
      ++i;
    } else {
      out.append(bytes, i, length);
      i += length;
    }
  }
}

std::string TerminalText(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  AppendTerminalText(out, bytes);
  return out;
}

}  // namespace iowatch
