// A JSON document read by nlohmann-json, strictly (RFC 8259: no comments, no
// trailing commas, no byte order mark, UTF-8 strings; plus no duplicate keys
// and nesting <= 32), that remembers where each value and each key starts, so
// that a check of the document's content can say where it failed:
//   golden.json:7:20: baselines[0].runs: expected a non-negative integer, ...
// Syntax errors are worded and placed as a hand-written reader would: at the
// byte that broke the rule, with what was expected there.
//
// nlohmann reports values, not positions (its SAX events carry none, its
// parse_error a byte count), so the reader follows the events through the
// text: between two events there is only whitespace and one ':' or ','.
//
// Private to probes/store (the only place that links nlohmann-json).
// Thread-safety: a document is immutable once parsed; share it freely.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/result.h"

namespace iowatch::probes::internal {

// Members in document order (so that "the first unknown key" is the first in
// the file) and long double numbers: 1e999 is then still a number, for the
// field's check to refuse ("expected a finite number, found 1e999"), instead
// of an overflow nlohmann reports as a syntax error (it still does beyond
// long double's range, about 1e4932).
using Json = nlohmann::basic_json<nlohmann::ordered_map, std::vector, std::string, bool,
                                  std::int64_t, std::uint64_t, long double>;

inline constexpr int kMaxJsonDepth = 32;

class JsonDocument {
 public:
  // `text` must outlive the document. `source` names it in errors.
  static Result<JsonDocument> Parse(std::string_view text, std::string_view source);

  const Json& Root() const { return *root_; }

  // An error at the start of `value` (any value of this document), or at the
  // start of the key whose member `value` is.
  std::unexpected<Error> ErrorAt(const Json& value, std::string message) const;
  std::unexpected<Error> ErrorAtKey(const Json& member_value, std::string message) const;

  // A number as written ("1e999", "-1", "01" never: that is a syntax error).
  std::string_view NumberText(const Json& number) const;

  // "a string", "an object", ...: what a message says was found.
  static std::string_view KindName(const Json& value);

 private:
  struct Where {
    size_t value = 0;  // byte offsets in text_
    size_t key = 0;
  };
  JsonDocument(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  std::unexpected<Error> ErrorAtOffset(size_t offset, std::string message) const;
  Where Find(const Json& value) const;

  std::string_view text_;
  std::string source_;
  std::unique_ptr<Json> root_;  // its address is a key of where_, so it must not move
  std::unordered_map<const Json*, Where> where_;

  friend class DocumentReader;
};

}  // namespace iowatch::probes::internal
