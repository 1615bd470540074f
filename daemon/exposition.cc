#include "daemon/exposition.h"

#include <fmt/format.h>

#include <cmath>

namespace iowatch::daemon {
namespace {

void AppendEscaped(std::string& out, std::string_view text, bool escape_quotes) {
  if (text.find_first_of(escape_quotes ? "\\\n\"" : "\\\n") == std::string_view::npos) {
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

void AppendDouble(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
  } else {
    fmt::format_to(std::back_inserter(out), "{}", value);
  }
}

}  // namespace

void ExpositionWriter::Family(std::string_view name, std::string_view type, std::string_view help) {
  if (current_ != nullptr && name == current_name_) return;  // still the same family
  current_name_ = name;
  auto [it, inserted] = families_.try_emplace(std::string(name));
  current_ = &it->second;
  if (inserted) {
    *current_ += "# HELP ";
    *current_ += name;
    *current_ += ' ';
    AppendEscaped(*current_, help, false);
    *current_ += "\n# TYPE ";
    *current_ += name;
    *current_ += ' ';
    *current_ += type;
    *current_ += '\n';
  }
}

void ExpositionWriter::AppendSeriesName(const Label* labels, size_t count) {
  std::string& out = *current_;
  out += current_name_;
  if (count == 0) return;
  out += '{';
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) out += ',';
    out += labels[i].name;
    out += "=\"";
    AppendEscaped(out, labels[i].value, true);
    out += '"';
  }
  out += '}';
}

void ExpositionWriter::Sample(const Label* labels, size_t count, double value) {
  AppendSeriesName(labels, count);
  *current_ += ' ';
  AppendDouble(*current_, value);
  *current_ += '\n';
}

void ExpositionWriter::Sample(std::initializer_list<Label> labels, double value) {
  Sample(labels.begin(), labels.size(), value);
}

void ExpositionWriter::SampleInt(std::initializer_list<Label> labels, uint64_t value) {
  AppendSeriesName(labels.begin(), labels.size());
  fmt::format_to(std::back_inserter(*current_), " {}\n", value);
}

std::string ExpositionWriter::Finish() && {
  size_t total = 0;
  for (const auto& [name, text] : families_) total += text.size();
  std::string out;
  out.reserve(total);
  for (const auto& [name, text] : families_) out += text;
  return out;
}

}  // namespace iowatch::daemon
