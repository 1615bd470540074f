// Text from the system (sysfs model and serial strings, dm names, config
// values) is bytes; what iowatch writes out is not: Prometheus label values
// and JSON strings must be valid UTF-8 (Prometheus refuses the scrape, our
// own baseline import refuses the file). ToValidUtf8 keeps valid UTF-8 as it
// is and replaces each byte that cannot start or continue a valid sequence
// with U+FFFD, as decoders do.
// JSON strings are written here too, for the same reason.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace iowatch {

bool IsValidUtf8(std::string_view text);
// The length of the valid UTF-8 sequence at text[i] (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0 when there is none.
size_t Utf8SequenceLength(std::string_view text, size_t i);
std::string ToValidUtf8(std::string_view text);

// The first C0 control character or DEL in `text` (names shown on terminals
// must hold none: an escape sequence could move the cursor or forge a line).
std::optional<size_t> ControlCharacterAt(std::string_view text);

// `raw` as a JSON string literal, quotes included: ToValidUtf8, then only the
// escapes RFC 8259 requires (", \, and control characters: \n \r \t by
// name, the rest as \u00XX). What every hand-written JSON writer uses
// (sysstat's and fio's layouts, the baseline export).
void AppendJsonString(std::string& out, std::string_view raw);
std::string JsonString(std::string_view raw);

}  // namespace iowatch
