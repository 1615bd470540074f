// Writing the baseline exchange document (format in store_json.h).
//
// Written by hand on purpose, as the other byte-exact writers (fio's and
// sysstat's JSON layouts in daemon/cli): the layout, key order and number
// text are part of the format (an export of an import is the same bytes,
// diffable and golden-testable), and a string writer is a few lines.
// Reading is nlohmann-json's job (store_json_document.h), where strictness,
// Unicode and number parsing are the hard part.
#include "probes/store/store_json.h"

#include "common/utf8.h"

namespace iowatch::probes {
namespace {

void AppendNumber(std::string& out, double value) {
  // fmt's "{}" is the shortest text that reads back as the same double and
  // ignores the locale. Non-finite values cannot be stored (PutBaseline).
  out += fmt::format("{}", value);
}

}  // namespace

std::string BaselinesToJson(std::span<const StoredBaseline> baselines) {
  std::string out =
      fmt::format("{{\n  \"iowatch_baselines\": {},\n  \"baselines\": [", kBaselinesJsonVersion);
  for (size_t i = 0; i < baselines.size(); ++i) {
    const Baseline& b = baselines[i].baseline;
    out += i == 0 ? "\n    {\n" : ",\n    {\n";
    for (auto [key, text] : {std::pair{"job", &b.job},
                             {"fingerprint", &b.fingerprint},
                             {"device", &b.device},
                             {"model", &b.model}}) {
      out += fmt::format("      \"{}\": ", key);
      AppendJsonString(out, *text);
      out += ",\n";
    }
    if (!baselines[i].firmware.empty()) {
      out += "      \"firmware\": ";
      AppendJsonString(out, baselines[i].firmware);
      out += ",\n";
    }
    // Only a load band's baseline says so: a clean one reads as before.
    if (b.band != kCleanBand) out += fmt::format("      \"band\": {},\n", b.band);
    out += fmt::format("      \"created_unix_ms\": {},\n", b.created_unix_ms);
    out += fmt::format("      \"runs\": {},\n", baselines[i].run_count);
    out += "      \"metrics\": [";
    for (size_t m = 0; m < b.metrics.size(); ++m) {
      const MetricBaseline& metric = b.metrics[m];
      out += m == 0 ? "\n        {\"op\": " : ",\n        {\"op\": ";
      AppendJsonString(out, metric.op);
      out += ", \"metric\": ";
      AppendJsonString(out, metric.metric);
      out += ", \"median\": ";
      AppendNumber(out, metric.median);
      out += ", \"spread\": ";
      AppendNumber(out, metric.spread);
      out += '}';
    }
    out += b.metrics.empty() ? "]\n    }" : "\n      ]\n    }";
  }
  out += baselines.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace iowatch::probes
