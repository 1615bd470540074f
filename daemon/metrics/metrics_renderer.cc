#include "daemon/metrics/metrics_renderer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>

#include "daemon/exposition/exposition.h"
#include "daemon/metrics/advice_families.h"
#include "daemon/sampling/family_table.h"
#include "daemon/sources/registry.h"

namespace iowatch::daemon {
namespace {

size_t Collectors(const Snapshot& s) { return s.collectors.size(); }

void CollectorDuration(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  w.Sample({{"collector", s.collectors[i].name}}, s.collectors[i].duration_seconds);
}

void CollectorSuccess(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  w.Sample({{"collector", s.collectors[i].name}}, s.collectors[i].success ? 1 : 0);
}

void CollectorTimeouts(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  w.SampleInt({{"collector", s.collectors[i].name}}, s.collectors[i].timeouts_total);
}

void CollectorParseErrors(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  w.SampleInt({{"collector", s.collectors[i].name}}, s.collectors[i].parse_errors_total);
}

const FamilyRow<double Snapshot::*> kSnapshotFields[] = {
    {"iowatch_sample_timestamp_seconds", "gauge", "When the sample served was taken.",
     &Snapshot::timestamp_seconds},
    {"iowatch_sampling_interval_seconds", "gauge", "Configured sampling interval.",
     &Snapshot::interval_seconds},
    {"iowatch_sampling_window_seconds", "gauge",
     "Window over which the *_window_max series take their maximum.", &Snapshot::window_seconds},
};

void SnapshotValue(const Snapshot& s, size_t, size_t field, ExpositionWriter& w) {
  w.Sample({}, s.*kSnapshotFields[field].value);
}

void AddSelfFamilies(TableBuilder& t) {
  t.Add("iowatch_collector_duration_seconds", "gauge",
        "Time the last sample spent reading and parsing each source.",
        {Collectors, CollectorDuration});
  t.Add("iowatch_collector_success", "gauge", "1 when the source was read and parsed.",
        {Collectors, CollectorSuccess});
  t.Add("iowatch_collector_parse_errors_total", "counter", "Malformed lines skipped since start.",
        {Collectors, CollectorParseErrors});
  t.Add("iowatch_collector_timeouts_total", "counter",
        "Samples in which the source did not answer within the read deadline (its previous "
        "values were served).",
        {Collectors, CollectorTimeouts});
  AddRowFamilies(t, kSnapshotFields, Once, SnapshotValue);
}

std::vector<FamilyDef> BuildFamilies() {
  TableBuilder t;
  for (const SourceDescriptor& source : RegisteredSources()) source.add_families(t);
  AddAdviceFamilies(t);
  AddSelfFamilies(t);
  return std::move(t).Sorted();
}

const std::vector<FamilyDef>& Families() {
  static const std::vector<FamilyDef> families = BuildFamilies();
  return families;
}

}  // namespace

MetricsCursor::MetricsCursor(std::shared_ptr<const Snapshot> snapshot)
    : snapshot_(std::move(snapshot)) {}

bool MetricsCursor::Next(std::string& out, size_t piece_bytes) {
  const std::vector<FamilyDef>& families = Families();
  const Snapshot& s = *snapshot_;
  const size_t target = out.size() + piece_bytes;
  ExpositionWriter w(out);
  for (; family_ < families.size(); ++family_, part_ = 0, header_written_ = false) {
    const FamilyDef& f = families[family_];
    w.Family(f.name, f.type, f.help, header_written_);
    for (; part_ < f.parts.size(); ++part_, item_ = 0) {
      const Part& p = f.parts[part_];
      for (const size_t n = p.count(s); item_ < n;) {
        p.write(s, item_++, p.arg, w);
        if (out.size() >= target) {
          header_written_ = w.header_written();
          return true;
        }
      }
    }
  }
  return false;
}

std::string RenderSnapshot(const Snapshot& snapshot) {
  // Not owning: the caller keeps the snapshot alive for the call.
  MetricsCursor cursor(
      std::shared_ptr<const Snapshot>(std::shared_ptr<const Snapshot>(), &snapshot));
  std::string out;
  while (cursor.Next(out, size_t{1} << 20)) {
  }
  return out;
}

std::vector<std::string_view> MetricFamilyNames() {
  std::vector<std::string_view> names;
  for (const FamilyDef& f : Families()) names.push_back(f.name);
  return names;
}

}  // namespace iowatch::daemon
