// Reading the baseline exchange document (format in store_json.h): nlohmann
// parses it (store_json_document.h), this file checks every field.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <set>
#include <tuple>

#include "common/utf8.h"
#include "probes/store/store_json.h"
#include "probes/store/store_json_document.h"

namespace iowatch::probes {
namespace {

// LoadBand caps bands far below this; a larger one is a typo, not a band.
constexpr int64_t kMaxBand = 64;

using internal::Json;
using internal::JsonDocument;

enum class Kind { kString, kNumber, kArray };

bool IsKind(const Json& value, Kind kind) {
  switch (kind) {
    case Kind::kString:
      return value.is_string();
    case Kind::kNumber:
      return value.is_number();
    case Kind::kArray:
      return value.is_array();
  }
  return false;
}

// Checks one object's keys and hands out its fields by name. `path` is the
// object's place in the document ("baselines[2]"), for messages.
class Fields {
 public:
  Fields(const JsonDocument& document, const Json& object, std::string path)
      : document_(document), object_(object), path_(std::move(path)) {}

  std::unexpected<Error> Fail(const Json& at, std::string_view where, std::string message) const {
    return document_.ErrorAt(
        at, where.empty() ? std::move(message) : fmt::format("{}: {}", where, message));
  }

  // Every key is one of `allowed`.
  Status OnlyKeys(std::initializer_list<std::string_view> allowed) const {
    for (const auto& [key, value] : object_.get_ref<const Json::object_t&>()) {
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string list;
      for (std::string_view name : allowed) {
        list += fmt::format("{}{}", list.empty() ? "" : ", ", name);
      }
      const std::string message = fmt::format("unknown key \"{}\" (expected {})", key, list);
      return document_.ErrorAtKey(value,
                                  path_.empty() ? message : fmt::format("{}: {}", path_, message));
    }
    return {};
  }

  Result<const Json*> Get(std::string_view key, Kind kind, std::string_view what) const {
    const Json* value = Find(key);
    if (value == nullptr)
      return Fail(object_, path_, fmt::format("missing \"{}\" ({})", key, what));
    if (!IsKind(*value, kind)) {
      return Fail(*value, Where(key),
                  fmt::format("expected {}, found {}", what, JsonDocument::KindName(*value)));
    }
    return value;
  }

  Result<std::string> String(std::string_view key, bool allow_empty) const {
    const std::string_view what = allow_empty ? "a string" : "a non-empty string";
    Result<const Json*> value = Get(key, Kind::kString, what);
    if (!value) return ErrorOf(value);
    const std::string& text = (*value)->get_ref<const std::string&>();
    if (!allow_empty && text.empty()) {
      return Fail(**value, Where(key), fmt::format("expected {}, found \"\"", what));
    }
    // Names and models are printed to terminals by `baseline list/show`: an
    // escape sequence or a newline in them would be the importer's to play.
    const std::optional<size_t> control = ControlCharacterAt(text);
    if (control && key != "fingerprint") {  // options text, shown escaped
      return Fail(
          **value, Where(key),
          fmt::format("expected {} without control characters, found U+{:04X} at byte {}", what,
                      static_cast<unsigned>(static_cast<unsigned char>(text[*control])), *control));
    }
    return text;
  }

  // Numbers are read from their text, as written: "1.0" is no count, and
  // 1e999 no finite number, whatever nlohmann made of them.
  Result<int64_t> Count(std::string_view key) const {
    constexpr std::string_view kWhat = "a non-negative integer";
    Result<const Json*> value = Get(key, Kind::kNumber, kWhat);
    if (!value) return ErrorOf(value);
    const std::string_view text = document_.NumberText(**value);
    int64_t out = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec != std::errc() || end != text.data() + text.size() || out < 0) {
      return Fail(**value, Where(key), fmt::format("expected {}, found {}", kWhat, text));
    }
    return out;
  }

  enum class Bound { kNonNegative, kPositive };
  Result<double> Number(std::string_view key, Bound bound) const {
    const bool positive = bound == Bound::kPositive;
    const std::string_view what = positive ? "a finite number > 0" : "a finite number >= 0";
    Result<const Json*> value = Get(key, Kind::kNumber, what);
    if (!value) return ErrorOf(value);
    const std::string_view text = document_.NumberText(**value);
    double out = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(out) || out < 0 ||
        (positive && out == 0)) {
      return Fail(**value, Where(key), fmt::format("expected {}, found {}", what, text));
    }
    return out;
  }

  // The member's value, or nullptr.
  const Json* Find(std::string_view key) const {
    for (const auto& [name, value] : object_.get_ref<const Json::object_t&>()) {
      if (name == key) return &value;
    }
    return nullptr;
  }

  std::string Where(std::string_view key) const {
    return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  }

 private:
  const JsonDocument& document_;
  const Json& object_;
  std::string path_;
};

Result<MetricBaseline> ReadMetric(const JsonDocument& document, const Json& value,
                                  const std::string& path) {
  Fields fields(document, value, path);
  if (!value.is_object()) {
    return fields.Fail(value, path,
                       fmt::format("expected an object {{op, metric, median, spread}}, found {}",
                                   JsonDocument::KindName(value)));
  }
  if (Status ok = fields.OnlyKeys({"op", "metric", "median", "spread"}); !ok) {
    return ErrorOf(ok);
  }
  MetricBaseline metric;
  Result<std::string> op = fields.String("op", false);
  if (!op) return ErrorOf(op);
  if (*op != "read" && *op != "write") {
    return fields.Fail(*fields.Find("op"), fields.Where("op"),
                       fmt::format("expected \"read\" or \"write\", found \"{}\"", *op));
  }
  metric.op = std::move(*op);
  Result<std::string> name = fields.String("metric", false);
  if (!name) return ErrorOf(name);
  metric.metric = std::move(*name);
  // A median of 0 would make every run a regression (or none): not a baseline.
  Result<double> median = fields.Number("median", Fields::Bound::kPositive);
  if (!median) return ErrorOf(median);
  metric.median = *median;
  Result<double> spread = fields.Number("spread", Fields::Bound::kNonNegative);
  if (!spread) return ErrorOf(spread);
  metric.spread = *spread;
  return metric;
}

Result<StoredBaseline> ReadBaseline(const JsonDocument& document, const Json& value,
                                    const std::string& path) {
  Fields fields(document, value, path);
  if (!value.is_object()) {
    return fields.Fail(
        value, path,
        fmt::format("expected a baseline object, found {}", JsonDocument::KindName(value)));
  }
  if (Status ok = fields.OnlyKeys({"job", "fingerprint", "device", "model", "firmware", "band",
                                   "created_unix_ms", "runs", "metrics"});
      !ok) {
    return ErrorOf(ok);
  }
  StoredBaseline stored;
  stored.pinned = true;
  Baseline& b = stored.baseline;
  for (auto [key, field, allow_empty] : {std::tuple{"job", &b.job, false},
                                         {"fingerprint", &b.fingerprint, false},
                                         {"device", &b.device, false},
                                         {"model", &b.model, true}}) {
    Result<std::string> text = fields.String(key, allow_empty);
    if (!text) return ErrorOf(text);
    *field = std::move(*text);
  }
  if (fields.Find("firmware") != nullptr) {
    Result<std::string> firmware = fields.String("firmware", true);
    if (!firmware) return ErrorOf(firmware);
    stored.firmware = std::move(*firmware);
  }
  if (fields.Find("band") != nullptr) {
    Result<int64_t> band = fields.Count("band");
    if (!band) return ErrorOf(band);
    if (*band > kMaxBand) {
      return fields.Fail(
          *fields.Find("band"), fields.Where("band"),
          fmt::format("expected a load band from 0 to {}, found {}", kMaxBand, *band));
    }
    b.band = static_cast<int>(*band);
  }
  Result<int64_t> created = fields.Count("created_unix_ms");
  if (!created) return ErrorOf(created);
  b.created_unix_ms = *created;
  Result<int64_t> runs = fields.Count("runs");
  if (!runs) return ErrorOf(runs);
  stored.run_count = *runs;
  Result<const Json*> metrics = fields.Get("metrics", Kind::kArray, "an array");
  if (!metrics) return ErrorOf(metrics);
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t i = 0; i < (*metrics)->size(); ++i) {
    const Json& item = (**metrics)[i];
    const std::string where = fmt::format("{}.metrics[{}]", path, i);
    Result<MetricBaseline> metric = ReadMetric(document, item, where);
    if (!metric) return ErrorOf(metric);
    if (!seen.emplace(metric->op, metric->metric).second) {
      return fields.Fail(item, where,
                         fmt::format("{} {} appears twice", metric->op, metric->metric));
    }
    b.metrics.push_back(std::move(*metric));
  }
  return stored;
}

}  // namespace

Result<std::vector<StoredBaseline>> BaselinesFromJson(std::string_view json,
                                                      std::string_view source) {
  Result<JsonDocument> document = JsonDocument::Parse(json, source);
  if (!document) return ErrorOf(document);
  const Json& root = document->Root();
  Fields top(*document, root, "");
  if (!root.is_object()) {
    return top.Fail(root, "document",
                    fmt::format("expected an object {{\"iowatch_baselines\": {}, \"baselines\": "
                                "[...]}}, found {}",
                                kBaselinesJsonVersion, JsonDocument::KindName(root)));
  }
  // The version first: a newer file deserves "newer version", not a
  // complaint about whichever field changed.
  Result<int64_t> version = top.Count("iowatch_baselines");
  if (!version) return ErrorOf(version);
  if (*version != kBaselinesJsonVersion) {
    return top.Fail(*top.Find("iowatch_baselines"), "iowatch_baselines",
                    fmt::format("unsupported version {} (this iowatch reads version {})", *version,
                                kBaselinesJsonVersion));
  }
  if (Status ok = top.OnlyKeys({"iowatch_baselines", "baselines"}); !ok) {
    return ErrorOf(ok);
  }
  Result<const Json*> list = top.Get("baselines", Kind::kArray, "an array");
  if (!list) return ErrorOf(list);
  std::vector<StoredBaseline> out;
  out.reserve((*list)->size());
  std::set<std::tuple<std::string, std::string, std::string, int>> seen;
  for (size_t i = 0; i < (*list)->size(); ++i) {
    const Json& item = (**list)[i];
    const std::string where = fmt::format("baselines[{}]", i);
    Result<StoredBaseline> stored = ReadBaseline(*document, item, where);
    if (!stored) return ErrorOf(stored);
    const Baseline& b = stored->baseline;
    if (!seen.emplace(b.job, b.fingerprint, b.device, b.band).second) {
      return top.Fail(item, where,
                      fmt::format("a second baseline for job \"{}\" on device {} with the same "
                                  "fingerprint and band",
                                  b.job, b.device));
    }
    out.push_back(std::move(*stored));
  }
  return out;
}

}  // namespace iowatch::probes
