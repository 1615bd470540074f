#include "daemon/metrics/push/exposition_families.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "collectors/text_scan.h"

namespace iowatch::daemon {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

struct Sample {
  std::string name;
  std::vector<ClientMetric::Label> labels;
  double value = 0;
};

Error LineError(int line, std::string what) {
  Error e;
  e.code = ErrorCode::kParse;
  e.message = std::move(what);
  e.path = "exposition";
  e.line = line;
  return e;
}

std::optional<double> ParseValue(std::string_view text) {
  if (text == "+Inf") return std::numeric_limits<double>::infinity();
  if (text == "-Inf") return -std::numeric_limits<double>::infinity();
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// `name="value",...}` after the '{'; advances `at` past the '}'.
bool ParseLabels(std::string_view line, size_t& at, std::vector<ClientMetric::Label>& labels) {
  while (at < line.size() && line[at] != '}') {
    const size_t eq = line.find("=\"", at);
    if (eq == std::string_view::npos) return false;
    ClientMetric::Label label{std::string(line.substr(at, eq - at)), {}};
    size_t i = eq + 2;
    for (; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] != '\\' || i + 1 >= line.size()) {
        label.value += line[i];
        continue;
      }
      const char escaped = line[++i];
      label.value += escaped == 'n' ? '\n' : escaped;
    }
    if (i >= line.size()) return false;
    labels.push_back(std::move(label));
    at = i + 1;
    if (at < line.size() && line[at] == ',') ++at;
  }
  if (at >= line.size()) return false;
  ++at;
  return true;
}

std::optional<Sample> ParseSample(std::string_view line) {
  Sample s;
  size_t at = line.find_first_of("{ ");
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  s.name = line.substr(0, at);
  if (line[at] == '{') {
    ++at;
    if (!ParseLabels(line, at, s.labels)) return std::nullopt;
  }
  if (at >= line.size() || line[at] != ' ') return std::nullopt;
  const auto value = ParseValue(line.substr(at + 1));
  if (!value) return std::nullopt;
  s.value = *value;
  return s;
}

std::optional<MetricType> TypeOf(std::string_view text) {
  if (text == "gauge") return MetricType::Gauge;
  if (text == "counter") return MetricType::Counter;
  if (text == "histogram") return MetricType::Histogram;
  if (text == "untyped") return MetricType::Untyped;
  return std::nullopt;
}

// The histogram entry of `family` with these labels (le left out), made when new.
ClientMetric& SeriesOf(MetricFamily& family, std::vector<ClientMetric::Label> labels) {
  std::erase_if(labels, [](const ClientMetric::Label& l) { return l.name == "le"; });
  auto it = std::ranges::find(family.metric, labels, &ClientMetric::label);
  if (it != family.metric.end()) return *it;
  family.metric.push_back({});
  family.metric.back().label = std::move(labels);
  return family.metric.back();
}

Status AddHistogramSample(MetricFamily& family, const Sample& s, int line) {
  const std::string_view suffix = std::string_view(s.name).substr(family.name.size());
  ClientMetric& m = SeriesOf(family, s.labels);
  if (suffix == "_sum") {
    m.histogram.sample_sum = s.value;
  } else if (suffix == "_count") {
    m.histogram.sample_count = static_cast<uint64_t>(s.value);
  } else if (suffix == "_bucket") {
    const auto le = std::ranges::find(s.labels, std::string("le"), &ClientMetric::Label::name);
    if (le == s.labels.end()) return std::unexpected(LineError(line, "expected an le label"));
    if (le->value == "+Inf") return {};  // the count
    const auto bound = ParseValue(le->value);
    if (!bound) return std::unexpected(LineError(line, "expected a number as le"));
    m.histogram.bucket.push_back({static_cast<uint64_t>(s.value), *bound});
  } else {
    return std::unexpected(
        LineError(line, fmt::format("expected {}_bucket, _sum or _count", family.name)));
  }
  return {};
}

Status AddSample(std::vector<MetricFamily>& families, const Sample& s, int line) {
  if (families.empty() || !s.name.starts_with(families.back().name)) {
    return std::unexpected(
        LineError(line, fmt::format("expected a # TYPE line before {}", s.name)));
  }
  MetricFamily& family = families.back();
  if (family.type == MetricType::Histogram) return AddHistogramSample(family, s, line);
  if (s.name != family.name) {
    return std::unexpected(
        LineError(line, fmt::format("expected a sample of {}, found {}", family.name, s.name)));
  }
  ClientMetric m;
  m.label = s.labels;
  if (family.type == MetricType::Counter) m.counter.value = s.value;
  if (family.type == MetricType::Gauge) m.gauge.value = s.value;
  if (family.type == MetricType::Untyped) m.untyped.value = s.value;
  family.metric.push_back(std::move(m));
  return {};
}

Status ParseComment(std::string_view line, int number, std::vector<MetricFamily>& families,
                    std::string& help) {
  if (line.starts_with("# HELP ")) {
    const std::string_view rest = line.substr(7);
    const size_t space = rest.find(' ');
    help = space == std::string_view::npos ? std::string() : std::string(rest.substr(space + 1));
    return {};
  }
  if (!line.starts_with("# TYPE ")) return {};  // another comment
  const std::string_view rest = line.substr(7);
  const size_t space = rest.find(' ');
  const auto type = space == std::string_view::npos ? std::nullopt : TypeOf(rest.substr(space + 1));
  if (!type) {
    return std::unexpected(
        LineError(number, "expected # TYPE NAME gauge|counter|histogram|untyped"));
  }
  const std::string name(rest.substr(0, space));
  if (families.empty() || families.back().name != name) {
    families.push_back({name, help, *type, {}});
  }
  help.clear();
  return {};
}

}  // namespace

Result<std::vector<MetricFamily>> ParseExposition(std::string_view text) {
  std::vector<MetricFamily> families;
  std::string help;
  Status status;  // the first error; the lines after it are not looked at
  collectors::ForEachLine(text, [&](std::string_view line, int number) {
    if (!status || line.empty()) return;
    if (line.starts_with('#')) {
      status = ParseComment(line, number, families, help);
      return;
    }
    const auto sample = ParseSample(line);
    status = sample ? AddSample(families, *sample, number)
                    : std::unexpected(LineError(number, "expected NAME{LABELS} VALUE"));
  });
  if (!status) return std::unexpected(status.error());
  return families;
}

}  // namespace iowatch::daemon
