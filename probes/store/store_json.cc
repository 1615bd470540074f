// A small strict JSON reader (RFC 8259) and string writer: enough for the
// baseline exchange format, with errors that say where and what was expected.
#include "probes/store/store_json.h"

#include <cstdint>
#include <tuple>

namespace iowatch::probes::internal {
namespace {

constexpr int kMaxDepth = 32;

class Parser {
 public:
  Parser(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  Result<JsonValue> Document() {
    SkipSpace();
    Result<JsonValue> value = Value(0);
    if (!value) return value;
    SkipSpace();
    if (pos_ != text_.size()) return Fail("expected the end of the document after the value");
    return value;
  }

 private:
  std::unexpected<Error> Fail(std::string message) const {
    return MakeError(ErrorCode::kParse, std::move(message), std::string(source_), line_, column_);
  }
  std::unexpected<Error> Expected(std::string_view what) const {
    if (pos_ >= text_.size())
      return Fail(fmt::format("expected {}, found the end of the input", what));
    const char c = text_[pos_];
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      return Fail(
          fmt::format("expected {}, found byte 0x{:02x}", what, static_cast<unsigned char>(c)));
    }
    return Fail(fmt::format("expected {}, found '{}'", what, c));
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  void Advance() {
    if (text_[pos_++] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
  }
  bool Consume(char c) {
    if (Peek() != c || AtEnd()) return false;
    Advance();
    return true;
  }
  void SkipSpace() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' || Peek() == '\r')) {
      Advance();
    }
  }

  Result<JsonValue> Value(int depth) {
    JsonValue value;
    value.line = line_;
    value.column = column_;
    if (AtEnd()) return Expected("a value");
    switch (Peek()) {
      case '{':
      case '[':
        if (depth >= kMaxDepth) return Fail(fmt::format("nested deeper than {}", kMaxDepth));
        if (Peek() == '{') {
          if (Status done = Object(value, depth + 1); !done) return std::unexpected(done.error());
        } else {
          if (Status done = Array(value, depth + 1); !done) return std::unexpected(done.error());
        }
        return value;
      case '"': {
        value.kind = JsonValue::Kind::kString;
        if (Status done = String(value.text); !done) return std::unexpected(done.error());
        return value;
      }
      case 't':
      case 'f':
      case 'n':
        if (Status done = Literal(value); !done) return std::unexpected(done.error());
        return value;
      default:
        if (Peek() == '-' || (Peek() >= '0' && Peek() <= '9')) {
          if (Status done = Number(value); !done) return std::unexpected(done.error());
          return value;
        }
        return Expected("a value");
    }
  }

  Status Object(JsonValue& value, int depth) {
    value.kind = JsonValue::Kind::kObject;
    Advance();  // '{'
    SkipSpace();
    if (Consume('}')) return {};
    for (;;) {
      if (Peek() != '"') return Expected("a key in double quotes");
      const int key_line = line_;
      const int key_column = column_;
      std::string key;
      if (Status done = String(key); !done) return done;
      for (const JsonMember& member : value.members) {
        if (member.key == key) {
          line_ = key_line;
          column_ = key_column;
          return Fail(fmt::format("duplicate key \"{}\"", key));
        }
      }
      SkipSpace();
      if (!Consume(':')) return Expected("':'");
      SkipSpace();
      Result<JsonValue> member = Value(depth);
      if (!member) return std::unexpected(member.error());
      value.members.push_back(JsonMember{std::move(key), std::move(*member), key_line, key_column});
      SkipSpace();
      if (Consume('}')) return {};
      if (!Consume(',')) return Expected("',' or '}'");
      SkipSpace();
    }
  }

  Status Array(JsonValue& value, int depth) {
    value.kind = JsonValue::Kind::kArray;
    Advance();  // '['
    SkipSpace();
    if (Consume(']')) return {};
    for (;;) {
      Result<JsonValue> item = Value(depth);
      if (!item) return std::unexpected(item.error());
      value.items.push_back(std::move(*item));
      SkipSpace();
      if (Consume(']')) return {};
      if (!Consume(',')) return Expected("',' or ']'");
      SkipSpace();
    }
  }

  Status Literal(JsonValue& value) {
    for (auto [word, kind, truth] : {std::tuple{"true", JsonValue::Kind::kBool, true},
                                     {"false", JsonValue::Kind::kBool, false},
                                     {"null", JsonValue::Kind::kNull, false}}) {
      if (text_.substr(pos_).starts_with(word)) {
        for (size_t i = std::string_view(word).size(); i > 0; --i) Advance();
        value.kind = kind;
        value.boolean = truth;
        return {};
      }
    }
    return Expected("a value");
  }

  Status Digits() {
    if (!(Peek() >= '0' && Peek() <= '9') || AtEnd()) return Expected("a digit");
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9') Advance();
    return {};
  }

  Status Number(JsonValue& value) {
    value.kind = JsonValue::Kind::kNumber;
    const size_t start = pos_;
    Consume('-');
    if (Consume('0')) {
      if (Peek() >= '0' && Peek() <= '9' && !AtEnd()) return Fail("a number has no leading zeros");
    } else if (Status done = Digits(); !done) {
      return done;
    }
    if (Consume('.')) {
      if (Status done = Digits(); !done) return done;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      Advance();
      if (!Consume('+')) Consume('-');
      if (Status done = Digits(); !done) return done;
    }
    value.text = std::string(text_.substr(start, pos_ - start));
    return {};
  }

  Result<uint32_t> Hex4() {
    uint32_t code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = Peek();
      uint32_t digit = 0;
      if (c >= '0' && c <= '9' && !AtEnd()) {
        digit = static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        digit = static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return Expected("four hex digits after \\u");
      }
      code = code * 16 + digit;
      Advance();
    }
    return code;
  }

  static void AppendUtf8(std::string& out, uint32_t code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xc0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xe0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code & 0x3f));
    }
  }

  Status Escape(std::string& out) {
    const char c = Peek();
    constexpr std::string_view kFrom = "\"\\/bfnrt";
    constexpr std::string_view kTo = "\"\\/\b\f\n\r\t";
    if (const size_t at = kFrom.find(c); at != std::string_view::npos && !AtEnd()) {
      out += kTo[at];
      Advance();
      return {};
    }
    if (!Consume('u')) return Expected("an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
    Result<uint32_t> code = Hex4();
    if (!code) return std::unexpected(code.error());
    if (*code >= 0xdc00 && *code <= 0xdfff) return Fail("unpaired low surrogate in \\u escape");
    if (*code >= 0xd800 && *code <= 0xdbff) {
      if (!Consume('\\') || !Consume('u')) return Expected("a low surrogate \\uDC00-\\uDFFF");
      Result<uint32_t> low = Hex4();
      if (!low) return std::unexpected(low.error());
      if (*low < 0xdc00 || *low > 0xdfff) return Fail("expected a low surrogate \\uDC00-\\uDFFF");
      *code = 0x10000 + ((*code - 0xd800) << 10) + (*low - 0xdc00);
    }
    AppendUtf8(out, *code);
    return {};
  }

  Status String(std::string& out) {
    Advance();  // '"'
    for (;;) {
      if (AtEnd()) return Fail("unterminated string");
      const char c = Peek();
      if (c == '"') {
        Advance();
        return {};
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        return Fail(fmt::format("control character 0x{:02x} in a string (escape it)",
                                static_cast<unsigned char>(c)));
      }
      Advance();
      if (c != '\\') {
        out += c;
      } else if (Status done = Escape(out); !done) {
        return done;
      }
    }
  }

  std::string_view text_;
  std::string_view source_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

std::string_view KindName(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::kNull:
      return "null";
    case JsonValue::Kind::kBool:
      return "a boolean";
    case JsonValue::Kind::kNumber:
      return "a number";
    case JsonValue::Kind::kString:
      return "a string";
    case JsonValue::Kind::kArray:
      return "an array";
    case JsonValue::Kind::kObject:
      return "an object";
  }
  return "a value";
}

Result<JsonValue> ParseJson(std::string_view text, std::string_view source) {
  return Parser(text, source).Document();
}

void AppendJsonString(std::string& out, std::string_view text) {
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

}  // namespace iowatch::probes::internal
