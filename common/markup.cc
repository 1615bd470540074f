#include "common/markup.h"

#include <fmt/format.h>

#include "common/utf8.h"

namespace iowatch {

std::string HtmlEscape(std::string_view raw) {
  const std::string text = IsValidUtf8(raw) ? std::string(raw) : ToValidUtf8(raw);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    // C1 controls are U+0080..U+009F, encoded 0xC2 0x80..0x9F.
    const bool c1 = c == 0xC2 && i + 1 < text.size() &&
                    static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02X}", c);
    } else if (c1) {
      out += fmt::format("\\u{:04X}", static_cast<unsigned char>(text[++i]));
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '"') {
      out += "&quot;";
    } else if (c == '\'') {
      out += "&#39;";
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace iowatch
