// Value syntaxes shared by the configuration and by job options: durations in
// Prometheus' syntax and byte sizes in fio's. Both parsers are strict subsets
// of their models: whatever they accept means what it means there, and
// anything the models would only guess at (signs, fractions, spaces, trailing
// junk) is an error rather than a surprise.
// Errors: kParse when the text is not in the syntax, kInvalidArgument when it
// is but the value does not fit in the result type. Messages read
// "expected ..., found "<text>"" so callers can prefix a key path.
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace iowatch {

// Durations as Prometheus writes them (model.ParseDuration): one or more
// <decimal integer><unit> terms, units from largest to smallest, each at most
// once: "500ms", "1s", "15m", "1h30m", "2d", "1w2d". Units: w (7 days), d,
// h, m, s, ms; lower case only. "0" alone is zero. No sign, no fraction, no
// spaces, no "y". Totals beyond INT64_MAX milliseconds are out of range.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// The shortest text ParseDuration reads back as `duration`: "1h30m", "1s500ms",
// "0s". Negative values get a leading '-' (which ParseDuration rejects).
std::string FormatDuration(std::chrono::milliseconds duration);

// Byte sizes as fio 3.33 reads them with its default kb_base=1024: decimal
// digits and an optional case-insensitive suffix.
//   none, "b"                          bytes
//   "k", "kb"  (also "K", "KB", "kB")  1024        "kib" (any case)  1000
//   "m", "mb"                          1024^2      "mib"             1000^2
//   "g", "gb"                          1024^3      "gib"             1000^3
//   "t", "tb"                          1024^4      "tib"             1000^4
//   "p", "pb"                          1024^5      "pib"             1000^5
// The IEC spellings are decimal because that is what fio does by default
// ("compatibility mode": "4KiB" is 4000 bytes, "4k" and "4KB" are 4096).
// fio's looser forms are errors here: hex ("0x10"), fractions ("1.5k", which
// fio reads as 1), signs, spaces, "Ki" without "B", repeated or unknown
// suffixes ("4kk"), percentages. Values above UINT64_MAX are out of range.
Result<uint64_t> ParseSize(std::string_view text);

}  // namespace iowatch
