// nlohmann's SAX parser driven into a document with the position of every
// value and key (store_json_document.h).
#include "probes/store/store_json_document.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

namespace iowatch::probes::internal {
namespace {

size_t SkipJsonSpace(std::string_view text, size_t at) {
  while (at < text.size() &&
         (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r')) {
    ++at;
  }
  return at;
}

bool IsDigitAt(std::string_view text, size_t at) {
  return at < text.size() && text[at] >= '0' && text[at] <= '9';
}

// Where the token that starts at `start` ends: a string, number or literal
// nlohmann has already accepted, so it only needs delimiting. A number ends
// where its grammar does ("-01" is "-0", then an error), not at the first
// byte that cannot be in one.
size_t JsonTokenEnd(std::string_view text, size_t start) {
  size_t at = start;
  const auto digits = [&] {
    while (IsDigitAt(text, at)) ++at;
  };
  switch (text[start]) {
    case '"':
      for (++at; text[at] != '"'; at += text[at] == '\\' ? 2 : 1) {
      }
      return at + 1;
    case 't':
    case 'n':
      return start + 4;
    case 'f':
      return start + 5;
    default:  // a number: below
      break;
  }
  if (text[at] == '-') ++at;
  if (text[at++] != '0') digits();
  if (at < text.size() && text[at] == '.') {
    ++at;
    digits();
  }
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    if (text[at] == '+' || text[at] == '-') ++at;
    digits();
  }
  return at;
}

std::string FoundAt(std::string_view text, size_t at) {
  if (at >= text.size()) return "the end of the input";
  const auto c = static_cast<unsigned char>(text[at]);
  if (c < 0x20 || c >= 0x7f) return fmt::format("byte 0x{:02x}", c);
  return fmt::format("'{}'", text[at]);
}

}  // namespace

// Receives nlohmann's SAX events, builds the Json tree, records where each
// value and key starts, refuses duplicate keys and deep nesting, and turns
// nlohmann's syntax errors into ones that say where and what was expected.
class DocumentReader : public nlohmann::json_sax<Json> {
 public:
  explicit DocumentReader(JsonDocument& document) : document_(document), text_(document.text_) {}

  Status Read() {
    // nlohmann skips a UTF-8 byte order mark; RFC 8259 forbids sending one.
    if (text_.starts_with('\xef')) return Expected(0, "a value");
    document_.root_ = std::make_unique<Json>();
    if (!Json::sax_parse(text_.begin(), text_.end(), this, Json::input_format_t::json,
                         /*strict=*/true, /*ignore_comments=*/false)) {
      if (error_) return std::unexpected(*error_);
      return At(end_, "not a JSON document");  // nlohmann stopped without saying why
    }
    // nlohmann ends the input at a NUL byte.
    if (const size_t rest = SkipJsonSpace(text_, end_); rest != text_.size()) {
      return At(rest, "expected the end of the document after the value");
    }
    document_.where_.reserve(value_starts_.size());
    Index(*document_.root_);
    return {};
  }

  bool null() override { return Scalar(nullptr); }
  bool boolean(bool value) override { return Scalar(value); }
  bool number_integer(number_integer_t value) override { return Scalar(value); }
  bool number_unsigned(number_unsigned_t value) override { return Scalar(value); }
  bool number_float(number_float_t value, const string_t&) override { return Scalar(value); }
  bool string(string_t& value) override { return Scalar(std::move(value)); }
  bool binary(binary_t&) override { return false; }  // never in JSON text
  bool start_object(std::size_t) override { return Open(Json::object()); }
  bool start_array(std::size_t) override { return Open(Json::array()); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }

  bool key(string_t& key) override {
    const size_t start = TokenStart();
    Frame& frame = stack_.back();
    if (!frame.keys.insert(key).second) {
      return Fail(start, fmt::format("duplicate key \"{}\"", key));
    }
    EndToken(start, JsonTokenEnd(text_, start), false);
    key_starts_.push_back(start);
    key_ = std::move(key);
    frame.next = Next::kColon;
    return true;
  }

  bool parse_error(std::size_t read, const std::string&, const Json::exception& e) override {
    error_ = SyntaxError(read, e).error();
    return false;
  }

 private:
  enum class Next { kFirst, kColon, kComma };  // what comes next in a container
  struct Frame {
    Json* container;
    Next next = Next::kFirst;
    std::unordered_set<std::string> keys;  // an object's, so far
  };
  enum class Want { kValue, kKey };

  std::unexpected<Error> At(size_t offset, std::string message) const {
    return document_.ErrorAtOffset(offset, std::move(message));
  }
  std::unexpected<Error> Expected(size_t offset, std::string_view what) const {
    return At(offset, fmt::format("expected {}, found {}", what, FoundAt(text_, offset)));
  }
  bool Fail(size_t offset, std::string message) {
    error_ = At(offset, std::move(message)).error();
    return false;
  }

  // Between two events there is whitespace and at most one ':' or ','.
  size_t TokenStart() const {
    size_t at = SkipJsonSpace(text_, end_);
    if (at < text_.size() && (text_[at] == ':' || text_[at] == ',')) {
      at = SkipJsonSpace(text_, at + 1);
    }
    return at;
  }
  void EndToken(size_t start, size_t end, bool number) {
    last_start_ = start;
    end_ = end;
    last_was_number_ = number;
  }

  Json* Place(Json value) {
    if (stack_.empty()) {
      *document_.root_ = std::move(value);
      return document_.root_.get();
    }
    Json& parent = *stack_.back().container;
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    // key() refused duplicates: append without ordered_map's linear search.
    auto& members = parent.get_ref<Json::object_t&>();
    members.Json::object_t::Container::emplace_back(std::move(key_), std::move(value));
    return &members.back().second;
  }
  void Completed() {
    if (stack_.empty()) {
      done_ = true;
    } else {
      stack_.back().next = Next::kComma;
    }
  }

  bool Scalar(Json value) {
    const size_t start = TokenStart();
    EndToken(start, JsonTokenEnd(text_, start), value.is_number());
    value_starts_.push_back(start);
    Place(std::move(value));
    Completed();
    return true;
  }
  bool Open(Json container) {
    const size_t start = TokenStart();
    if (stack_.size() >= kMaxJsonDepth) {
      return Fail(start, fmt::format("nested deeper than {}", kMaxJsonDepth));
    }
    EndToken(start, start + 1, false);
    value_starts_.push_back(start);
    stack_.push_back(
        Frame{.container = Place(std::move(container)), .next = Next::kFirst, .keys = {}});
    return true;
  }
  bool Close() {
    const size_t start = TokenStart();
    EndToken(start, start + 1, false);
    stack_.pop_back();
    Completed();
    return true;
  }

  // Pairs each value of the finished tree with its start, in document order.
  void Index(const Json& value) {
    document_.where_[&value].value = value_starts_[next_value_++];
    if (value.is_object()) {
      for (const auto& [name, member] : value.get_ref<const Json::object_t&>()) {
        document_.where_[&member].key = key_starts_[next_key_++];
        Index(member);
      }
    } else if (value.is_array()) {
      for (const Json& item : value) Index(item);
    }
  }

  std::unexpected<Error> SyntaxError(size_t read, const Json::exception& e) const;
  std::unexpected<Error> TokenError(size_t at, Want want, size_t read,
                                    const Json::exception& e) const;
  std::unexpected<Error> StringError(size_t read, const Json::exception& e) const;

  JsonDocument& document_;
  std::string_view text_;
  std::vector<Frame> stack_;
  bool done_ = false;      // the top-level value is complete
  size_t end_ = 0;         // where the last token ended
  size_t last_start_ = 0;  // and where it started
  bool last_was_number_ = false;
  std::string key_;                   // of the member being read
  std::vector<size_t> value_starts_;  // in document order
  std::vector<size_t> key_starts_;
  size_t next_value_ = 0;  // Index's place in them
  size_t next_key_ = 0;
  std::optional<Error> error_;
};

// nlohmann stopped after reading `read` bytes. What was expected follows from
// where the events left off; which byte broke it, from `read` and e.
std::unexpected<Error> DocumentReader::SyntaxError(size_t read, const Json::exception& e) const {
  // "01" is two tokens to nlohmann: 0, then a number where none may be.
  const std::string_view last = text_.substr(last_start_, end_ - last_start_);
  if (last_was_number_ && (last == "0" || last == "-0") && IsDigitAt(text_, end_)) {
    return At(end_, "a number has no leading zeros");
  }
  size_t at = SkipJsonSpace(text_, end_);
  if (stack_.empty()) {
    if (done_) return At(at, "expected the end of the document after the value");
    return TokenError(at, Want::kValue, read, e);
  }
  const Frame& frame = stack_.back();
  const bool object = frame.container->is_object();
  if (frame.next != Next::kFirst) {
    const bool colon = frame.next == Next::kColon;
    if (at >= text_.size() || text_[at] != (colon ? ':' : ',')) {
      return Expected(at, colon ? "':'" : object ? "',' or '}'" : "',' or ']'");
    }
    at = SkipJsonSpace(text_, at + 1);
  }
  return TokenError(at, object && frame.next != Next::kColon ? Want::kKey : Want::kValue, read, e);
}

// The token at `at` is where a key or value had to be.
std::unexpected<Error> DocumentReader::TokenError(size_t at, Want want, size_t read,
                                                  const Json::exception& e) const {
  const std::string_view what = want == Want::kKey ? "a key in double quotes" : "a value";
  constexpr std::string_view kValueStarts = "{[\"-0123456789";
  const char c = at < text_.size() ? text_[at] : '\0';
  const bool starts =
      at < text_.size() &&
      (want == Want::kKey ? c == '"' : kValueStarts.find(c) != std::string_view::npos);
  // A misspelt true, false or null is wrong from its first letter.
  if (!starts) return Expected(at, what);
  if (c == '"') return StringError(read, e);
  if (e.id == 406) {  // beyond long double
    const std::string_view number = text_.substr(at, JsonTokenEnd(text_, at) - at);
    return At(at, fmt::format("expected a finite number, found {}", number));
  }
  if (c == '-' || (c >= '0' && c <= '9')) return Expected(read - 1, "a digit");
  return At(read - 1, e.what());
}

// nlohmann's lexer stopped in a string at the byte it read last, read - 1.
std::unexpected<Error> DocumentReader::StringError(size_t read, const Json::exception& e) const {
  // Only nlohmann's own words: after "; last read:" it quotes the input,
  // which may say anything (fuzz_baseline_json: a string holding "control
  // character" was taken for that error, and its byte read past the end).
  std::string_view message = e.what();
  message = message.substr(0, message.find("; last read:"));
  const auto says = [&](std::string_view part) {
    return message.find(part) != std::string_view::npos;
  };
  // The end of the text (at == size) is a position too: "found the end".
  const size_t at = read == 0 ? 0 : std::min(read - 1, text_.size());
  if (says("missing closing quote")) return At(at, "unterminated string");
  if (says("control character") && at < text_.size()) {
    return At(at, fmt::format("control character 0x{:02x} in a string (escape it)",
                              static_cast<unsigned char>(text_[at])));
  }
  if (says("forbidden character after backslash")) {
    return Expected(at, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
  }
  if (says("must be followed by 4 hex digits")) return Expected(at, "four hex digits after \\u");
  if (says("must be followed by U+DC00..U+DFFF")) {
    // After a whole \uXXXX that is no low surrogate, or where its \u belongs.
    if (read >= 6 && text_.substr(read - 6, 2) == "\\u") {
      return At(read, "expected a low surrogate \\uDC00-\\uDFFF");
    }
    return Expected(at, "a low surrogate \\uDC00-\\uDFFF");
  }
  if (says("must follow U+D800..U+DBFF")) return At(read, "unpaired low surrogate in \\u escape");
  if (says("ill-formed UTF-8")) return Expected(at, "UTF-8 in a string");
  return At(at, std::string(message));
}

Result<JsonDocument> JsonDocument::Parse(std::string_view text, std::string_view source) {
  JsonDocument document(text, source);
  DocumentReader reader(document);
  if (Status read = reader.Read(); !read) return ErrorOf(read);
  return document;
}

JsonDocument::Where JsonDocument::Find(const Json& value) const {
  const auto found = where_.find(&value);
  return found == where_.end() ? Where{} : found->second;
}

std::unexpected<Error> JsonDocument::ErrorAtOffset(size_t offset, std::string message) const {
  const std::string_view before = text_.substr(0, std::min(offset, text_.size()));
  const size_t newline = before.rfind('\n');
  const size_t line_start = newline == std::string_view::npos ? 0 : newline + 1;
  return MakeError(ErrorCode::kParse, std::move(message), source_,
                   1 + static_cast<int>(std::count(before.begin(), before.end(), '\n')),
                   1 + static_cast<int>(offset - line_start));
}

std::unexpected<Error> JsonDocument::ErrorAt(const Json& value, std::string message) const {
  return ErrorAtOffset(Find(value).value, std::move(message));
}

std::unexpected<Error> JsonDocument::ErrorAtKey(const Json& member_value,
                                                std::string message) const {
  return ErrorAtOffset(Find(member_value).key, std::move(message));
}

std::string_view JsonDocument::NumberText(const Json& number) const {
  const size_t start = Find(number).value;
  return text_.substr(start, JsonTokenEnd(text_, start) - start);
}

std::string_view JsonDocument::KindName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "a number";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    default:
      return "a value";
  }
}

}  // namespace iowatch::probes::internal
