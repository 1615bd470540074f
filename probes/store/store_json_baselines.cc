// The baseline exchange document (format in store_json.h): writing it, and
// reading it back with a check of every field.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <set>
#include <tuple>

#include "probes/store/store_json.h"

namespace iowatch::probes {
namespace {

using internal::JsonMember;
using internal::JsonValue;
using Kind = JsonValue::Kind;

// Checks one object's keys and hands out its fields by name. `path` is the
// object's place in the document ("baselines[2]"), for messages.
class Fields {
 public:
  Fields(const JsonValue& object, std::string path, std::string_view source)
      : object_(object), path_(std::move(path)), source_(source) {}

  std::unexpected<Error> Fail(const JsonValue& at, std::string_view where,
                              std::string message) const {
    return MakeError(ErrorCode::kParse,
                     where.empty() ? std::move(message) : fmt::format("{}: {}", where, message),
                     std::string(source_), at.line, at.column);
  }

  // Every key is one of `allowed`.
  Status OnlyKeys(std::initializer_list<std::string_view> allowed) const {
    for (const JsonMember& member : object_.members) {
      if (std::find(allowed.begin(), allowed.end(), member.key) != allowed.end()) continue;
      std::string list;
      for (std::string_view key : allowed) {
        list += fmt::format("{}{}", list.empty() ? "" : ", ", key);
      }
      JsonValue at;  // the key's position, not its value's
      at.line = member.key_line;
      at.column = member.key_column;
      return Fail(at, path_, fmt::format("unknown key \"{}\" (expected {})", member.key, list));
    }
    return {};
  }

  Result<const JsonValue*> Get(std::string_view key, Kind kind, std::string_view what) const {
    for (const JsonMember& member : object_.members) {
      if (member.key != key) continue;
      if (member.value.kind != kind) {
        return Fail(
            member.value, Where(key),
            fmt::format("expected {}, found {}", what, internal::KindName(member.value.kind)));
      }
      return &member.value;
    }
    return Fail(object_, path_, fmt::format("missing \"{}\" ({})", key, what));
  }

  Result<std::string> String(std::string_view key, bool allow_empty) const {
    const std::string_view what = allow_empty ? "a string" : "a non-empty string";
    Result<const JsonValue*> value = Get(key, Kind::kString, what);
    if (!value) return std::unexpected(value.error());
    if (!allow_empty && (*value)->text.empty()) {
      return Fail(**value, Where(key), fmt::format("expected {}, found \"\"", what));
    }
    return (*value)->text;
  }

  Result<int64_t> Count(std::string_view key) const {
    constexpr std::string_view kWhat = "a non-negative integer";
    Result<const JsonValue*> value = Get(key, Kind::kNumber, kWhat);
    if (!value) return std::unexpected(value.error());
    const std::string& text = (*value)->text;
    int64_t out = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec != std::errc() || end != text.data() + text.size() || out < 0) {
      return Fail(**value, Where(key), fmt::format("expected {}, found {}", kWhat, text));
    }
    return out;
  }

  Result<double> Number(std::string_view key, bool non_negative) const {
    const std::string_view what = non_negative ? "a finite number >= 0" : "a finite number";
    Result<const JsonValue*> value = Get(key, Kind::kNumber, what);
    if (!value) return std::unexpected(value.error());
    const std::string& text = (*value)->text;
    double out = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(out) ||
        (non_negative && out < 0)) {
      return Fail(**value, Where(key), fmt::format("expected {}, found {}", what, text));
    }
    return out;
  }

  // The member's value; the caller knows it is there.
  const JsonValue& Find(std::string_view key) const {
    for (const JsonMember& member : object_.members) {
      if (member.key == key) return member.value;
    }
    return object_;
  }

  std::string Where(std::string_view key) const {
    return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  }

 private:
  const JsonValue& object_;
  std::string path_;
  std::string_view source_;
};

Result<MetricBaseline> ReadMetric(const JsonValue& value, const std::string& path,
                                  std::string_view source) {
  Fields fields(value, path, source);
  if (value.kind != Kind::kObject) {
    return fields.Fail(value, path,
                       fmt::format("expected an object {{op, metric, median, spread}}, found {}",
                                   internal::KindName(value.kind)));
  }
  if (Status ok = fields.OnlyKeys({"op", "metric", "median", "spread"}); !ok) {
    return std::unexpected(ok.error());
  }
  MetricBaseline metric;
  Result<std::string> op = fields.String("op", false);
  if (!op) return std::unexpected(op.error());
  if (*op != "read" && *op != "write") {
    return fields.Fail(fields.Find("op"), fields.Where("op"),
                       fmt::format("expected \"read\" or \"write\", found \"{}\"", *op));
  }
  metric.op = std::move(*op);
  Result<std::string> name = fields.String("metric", false);
  if (!name) return std::unexpected(name.error());
  metric.metric = std::move(*name);
  Result<double> median = fields.Number("median", false);
  if (!median) return std::unexpected(median.error());
  metric.median = *median;
  Result<double> spread = fields.Number("spread", true);
  if (!spread) return std::unexpected(spread.error());
  metric.spread = *spread;
  return metric;
}

Result<StoredBaseline> ReadBaseline(const JsonValue& value, const std::string& path,
                                    std::string_view source) {
  Fields fields(value, path, source);
  if (value.kind != Kind::kObject) {
    return fields.Fail(
        value, path,
        fmt::format("expected a baseline object, found {}", internal::KindName(value.kind)));
  }
  if (Status ok = fields.OnlyKeys(
          {"job", "fingerprint", "device", "model", "created_unix_ms", "runs", "metrics"});
      !ok) {
    return std::unexpected(ok.error());
  }
  StoredBaseline stored;
  stored.pinned = true;
  Baseline& b = stored.baseline;
  for (auto [key, field, allow_empty] : {std::tuple{"job", &b.job, false},
                                         {"fingerprint", &b.fingerprint, false},
                                         {"device", &b.device, false},
                                         {"model", &b.model, true}}) {
    Result<std::string> text = fields.String(key, allow_empty);
    if (!text) return std::unexpected(text.error());
    *field = std::move(*text);
  }
  Result<int64_t> created = fields.Count("created_unix_ms");
  if (!created) return std::unexpected(created.error());
  b.created_unix_ms = *created;
  Result<int64_t> runs = fields.Count("runs");
  if (!runs) return std::unexpected(runs.error());
  stored.run_count = *runs;
  Result<const JsonValue*> metrics = fields.Get("metrics", Kind::kArray, "an array");
  if (!metrics) return std::unexpected(metrics.error());
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t i = 0; i < (*metrics)->items.size(); ++i) {
    const std::string where = fmt::format("{}.metrics[{}]", path, i);
    Result<MetricBaseline> metric = ReadMetric((*metrics)->items[i], where, source);
    if (!metric) return std::unexpected(metric.error());
    if (!seen.emplace(metric->op, metric->metric).second) {
      return fields.Fail((*metrics)->items[i], where,
                         fmt::format("{} {} appears twice", metric->op, metric->metric));
    }
    b.metrics.push_back(std::move(*metric));
  }
  return stored;
}

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
      internal::AppendJsonString(out, *text);
      out += ",\n";
    }
    out += fmt::format("      \"created_unix_ms\": {},\n", b.created_unix_ms);
    out += fmt::format("      \"runs\": {},\n", baselines[i].run_count);
    out += "      \"metrics\": [";
    for (size_t m = 0; m < b.metrics.size(); ++m) {
      const MetricBaseline& metric = b.metrics[m];
      out += m == 0 ? "\n        {\"op\": " : ",\n        {\"op\": ";
      internal::AppendJsonString(out, metric.op);
      out += ", \"metric\": ";
      internal::AppendJsonString(out, metric.metric);
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

Result<std::vector<StoredBaseline>> BaselinesFromJson(std::string_view json,
                                                      std::string_view source) {
  Result<JsonValue> document = internal::ParseJson(json, source);
  if (!document) return std::unexpected(document.error());
  Fields top(*document, "", source);
  if (document->kind != Kind::kObject) {
    return top.Fail(*document, "document",
                    fmt::format("expected an object {{\"iowatch_baselines\": {}, \"baselines\": "
                                "[...]}}, found {}",
                                kBaselinesJsonVersion, internal::KindName(document->kind)));
  }
  // The version first: a newer file deserves "newer version", not a
  // complaint about whichever field changed.
  Result<int64_t> version = top.Count("iowatch_baselines");
  if (!version) return std::unexpected(version.error());
  if (*version != kBaselinesJsonVersion) {
    return top.Fail(top.Find("iowatch_baselines"), "iowatch_baselines",
                    fmt::format("unsupported version {} (this iowatch reads version {})", *version,
                                kBaselinesJsonVersion));
  }
  if (Status ok = top.OnlyKeys({"iowatch_baselines", "baselines"}); !ok) {
    return std::unexpected(ok.error());
  }
  Result<const JsonValue*> list = top.Get("baselines", Kind::kArray, "an array");
  if (!list) return std::unexpected(list.error());
  std::vector<StoredBaseline> out;
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (size_t i = 0; i < (*list)->items.size(); ++i) {
    const std::string where = fmt::format("baselines[{}]", i);
    Result<StoredBaseline> stored = ReadBaseline((*list)->items[i], where, source);
    if (!stored) return std::unexpected(stored.error());
    const Baseline& b = stored->baseline;
    if (!seen.emplace(b.job, b.fingerprint, b.device).second) {
      return top.Fail((*list)->items[i], where,
                      fmt::format("a second baseline for job \"{}\" on device {} with the same "
                                  "fingerprint",
                                  b.job, b.device));
    }
    out.push_back(std::move(*stored));
  }
  return out;
}

}  // namespace iowatch::probes
