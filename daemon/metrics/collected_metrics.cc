#include "daemon/metrics/collected_metrics.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/enum_names.h"
#include "daemon/exposition/exposition.h"

namespace iowatch::daemon {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr EnumName<MetricType> kTypeNames[] = {{MetricType::Counter, "counter"},
                                               {MetricType::Gauge, "gauge"},
                                               {MetricType::Summary, "summary"},
                                               {MetricType::Untyped, "untyped"},
                                               {MetricType::Histogram, "histogram"}};
static_assert(NamesEveryValue<kTypeNames>());

std::string_view TypeName(MetricType type) { return NameIn<MetricType>(kTypeNames, type); }

// The metric's labels plus one more (a histogram bucket's "le").
std::vector<Label> LabelsOf(const ClientMetric& metric) {
  std::vector<Label> labels;
  labels.reserve(metric.label.size() + 1);
  for (const ClientMetric::Label& l : metric.label) labels.push_back({l.name, l.value});
  return labels;
}

void WriteHistogram(const MetricFamily& family, std::string& out) {
  out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", family.name, family.help, family.name);
  const std::string bucket = family.name + "_bucket";
  const std::string sum = family.name + "_sum";
  const std::string count = family.name + "_count";
  for (const ClientMetric& metric : family.metric) {
    ExpositionWriter w(out);
    std::vector<Label> labels = LabelsOf(metric);
    w.Family(bucket, "histogram", "", true);
    labels.push_back({"le", ""});
    for (const ClientMetric::Bucket& b : metric.histogram.bucket) {
      const std::string le = std::isinf(b.upper_bound) ? "+Inf" : fmt::format("{}", b.upper_bound);
      labels.back().value = le;
      w.Sample(labels.data(), labels.size(), static_cast<double>(b.cumulative_count));
    }
    labels.pop_back();
    w.Family(sum, "histogram", "", true);
    w.Sample(labels.data(), labels.size(), metric.histogram.sample_sum);
    w.Family(count, "histogram", "", true);
    w.Sample(labels.data(), labels.size(), static_cast<double>(metric.histogram.sample_count));
  }
}

double ValueOf(MetricType type, const ClientMetric& metric) {
  switch (type) {
    case MetricType::Counter:
      return metric.counter.value;
    case MetricType::Gauge:
      return metric.gauge.value;
    default:
      return metric.untyped.value;
  }
}

}  // namespace

void AppendCollected(std::vector<MetricFamily> families, std::string& out) {
  std::ranges::sort(families, {}, &MetricFamily::name);
  for (MetricFamily& family : families) {
    if (family.metric.empty()) continue;
    std::ranges::sort(family.metric, {}, &ClientMetric::label);
    if (family.type == MetricType::Histogram) {
      WriteHistogram(family, out);
      continue;
    }
    ExpositionWriter w(out);
    w.Family(family.name, TypeName(family.type), family.help);
    for (const ClientMetric& metric : family.metric) {
      const std::vector<Label> labels = LabelsOf(metric);
      w.Sample(labels.data(), labels.size(), ValueOf(family.type, metric));
    }
  }
}

}  // namespace iowatch::daemon
