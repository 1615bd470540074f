#include "daemon/exposition/exposition.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "common/utf8.h"

namespace iowatch::daemon {
namespace {

// A plain sample's suffix: "" rather than {}, whose null data memcpy may not
// be given even for zero bytes (UBSan).
constexpr std::string_view kNoSuffix = "";

// Longest text of one value: "-2.2250738585072014e-308" (24), 2^64 - 1 (20).
constexpr size_t kMaxValueChars = 32;

// A plain loop: find_first_of with a set of characters calls memchr per
// character of `text`, which showed as 8 % of a scrape.
bool NeedsEscaping(std::string_view text, bool escape_quotes) {
  for (const char c : text) {
    if (c == '\\' || c == '\n' || (c == '"' && escape_quotes)) return true;
  }
  return false;
}

void AppendEscaped(std::string& out, std::string_view text, bool escape_quotes) {
  if (!NeedsEscaping(text, escape_quotes)) {
    out += text;  // the common case: nothing to escape
    return;
  }
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && escape_quotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

// The first and the last sizeof(Chunk) bytes of n (sizeof(Chunk) <= n <= 2 * sizeof(Chunk)),
// through registers.
template <typename Chunk>
[[gnu::always_inline]] inline void CopyEnds(char* out, const char* from, size_t n) {
  Chunk head, tail;
  std::memcpy(&head, from, sizeof head);
  std::memcpy(&tail, from + n - sizeof tail, sizeof tail);
  std::memcpy(out, &head, sizeof head);
  std::memcpy(out + n - sizeof tail, &tail, sizeof tail);
}

// Names and label values are a few to a few dozen bytes, where a call to memcpy (its size
// dispatch) cost more than the copy: a tenth of a scrape. Copied inline, in overlapping
// chunks that never read or write past either end (a memcpy of a constant size is a load
// and a store).
[[gnu::always_inline]] inline char* Copy(char* out, std::string_view text) {
  const char* from = text.data();
  const size_t n = text.size();
  if (n >= 16) {
    for (size_t i = 0; i + 16 < n; i += 16) std::memcpy(out + i, from + i, 16);
    std::memcpy(out + n - 16, from + n - 16, 16);
  } else if (n >= 8) {
    CopyEnds<uint64_t>(out, from, n);
  } else if (n >= 4) {
    CopyEnds<uint32_t>(out, from, n);
  } else if (n > 0) {
    out[0] = from[0];
    out[n / 2] = from[n / 2];
    out[n - 1] = from[n - 1];
  }
  return out + n;
}

// Whether a label value needs more than a copy: an escape, or bytes beyond
// ASCII that may not be UTF-8 (Prometheus refuses the whole scrape for one
// invalid label value, and a device name or model can hold any byte).
bool LabelValueNeedsWork(std::string_view value) {
  for (const char c : value) {
    if (c == '\\' || c == '\n' || c == '"' || static_cast<unsigned char>(c) >= 0x80) return true;
  }
  return false;
}

// Needs room for kLabelValueExpansion * value.size() characters.
constexpr size_t kLabelValueExpansion = 3;  // an invalid byte becomes U+FFFD's 3 bytes
// The rare value that needs escaping or repair, out of the line's loop.
[[gnu::noinline]] char* CopyWorkedLabelValue(char* out, std::string_view raw) {
  std::string repaired;
  std::string_view value = raw;
  if (!IsValidUtf8(raw)) {
    repaired = ToValidUtf8(raw);
    value = repaired;
  }
  for (const char c : value) {
    if (c == '\\' || c == '"') {
      *out++ = '\\';
      *out++ = c;
    } else if (c == '\n') {
      *out++ = '\\';
      *out++ = 'n';
    } else {
      *out++ = c;
    }
  }
  return out;
}

[[gnu::always_inline]] inline char* CopyLabelValue(char* out, std::string_view raw) {
  return LabelValueNeedsWork(raw) ? CopyWorkedLabelValue(out, raw) : Copy(out, raw);
}

char* CopyValue(char* out, uint64_t value) {
  const fmt::format_int digits(value);
  return Copy(out, std::string_view(digits.data(), digits.size()));
}

char* CopyValue(char* out, double value) {
  if (std::isnan(value)) return Copy(out, "NaN");
  if (std::isinf(value)) return Copy(out, value > 0 ? "+Inf" : "-Inf");
  // Counters, sizes and idle rates are whole numbers, which fmt's shortest
  // form prints as plain digits below 1e16: integer formatting gives the
  // same bytes for a fraction of the cost. (-0.0 prints as "-0": not here.)
  if (value >= 0 && value < 1e15 && !std::signbit(value) && value == std::floor(value)) {
    return CopyValue(out, static_cast<uint64_t>(value));
  }
  // Shortest round-trip form; a compiled format skips parsing "{}" per sample.
  return fmt::format_to(out, FMT_COMPILE("{}"), value);
}

// One sample line, written in place: a line is assembled from a dozen short
// pieces, and appending them one by one (a capacity check and often a call
// each) cost more than formatting the numbers.
template <class Value>
void AppendLine(std::string& out, std::string_view name, std::string_view suffix,
                const Label* labels, size_t count, Value value) {
  size_t bound = name.size() + suffix.size() + 2 + 1 + kMaxValueChars + 1;  // {} space value \n
  for (size_t i = 0; i < count; ++i) {
    // ="" and a comma
    bound += labels[i].name.size() + 4 + kLabelValueExpansion * labels[i].value.size();
  }
  const size_t used = out.size();
  out.resize_and_overwrite(used + bound, [&](char* begin, size_t) {
    char* p = Copy(Copy(begin + used, name), suffix);
    if (count > 0) {
      *p++ = '{';
      for (size_t i = 0; i < count; ++i) {
        if (i > 0) *p++ = ',';
        p = Copy(p, labels[i].name);
        *p++ = '=';
        *p++ = '"';
        p = CopyLabelValue(p, labels[i].value);
        *p++ = '"';
      }
      *p++ = '}';
    }
    *p++ = ' ';
    p = CopyValue(p, value);
    *p++ = '\n';
    return static_cast<size_t>(p - begin);
  });
}

}  // namespace

void ExpositionWriter::Family(std::string_view name, std::string_view type, std::string_view help,
                              bool header_written) {
  name_ = name;
  type_ = type;
  help_ = help;
  header_written_ = header_written;
}

void ExpositionWriter::WriteHeader() {
  header_written_ = true;
  std::string& out = *out_;
  out += "# HELP ";
  out += name_;
  out += ' ';
  AppendEscaped(out, help_, false);
  out += "\n# TYPE ";
  out += name_;
  out += ' ';
  out += type_;
  out += '\n';
}

void ExpositionWriter::Sample(const Label* labels, size_t count, double value) {
  if (!header_written_) WriteHeader();
  AppendLine(*out_, name_, kNoSuffix, labels, count, value);
}

void ExpositionWriter::SuffixedSample(std::string_view suffix, const Label* labels, size_t count,
                                      double value) {
  if (!header_written_) WriteHeader();
  AppendLine(*out_, name_, suffix, labels, count, value);
}

void ExpositionWriter::SuffixedSampleInt(std::string_view suffix, const Label* labels, size_t count,
                                         uint64_t value) {
  if (!header_written_) WriteHeader();
  AppendLine(*out_, name_, suffix, labels, count, value);
}

void ExpositionWriter::Sample(std::initializer_list<Label> labels, double value) {
  Sample(labels.begin(), labels.size(), value);
}

void ExpositionWriter::SampleInt(std::initializer_list<Label> labels, uint64_t value) {
  if (!header_written_) WriteHeader();
  AppendLine(*out_, name_, kNoSuffix, labels.begin(), labels.size(), value);
}

}  // namespace iowatch::daemon
