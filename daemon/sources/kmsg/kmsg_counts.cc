#include "daemon/sources/kmsg/kmsg_counts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "collectors/kmsg/kmsg_record.h"
#include "common/block_status.h"
#include "common/file_tree.h"

namespace iowatch::daemon {

namespace {

// One more in the series `key_of` finds `key` in (kept sorted by it); a
// series not there yet is `first`, counting 1.
template <class Series, class KeyOf>
void CountOne(std::vector<Series>& series, const auto& key, KeyOf key_of, Series first) {
  const auto at = std::ranges::lower_bound(series, key, {}, key_of);
  if (at != series.end() && key_of(*at) == key) {
    ++at->count;
  } else {
    first.count = 1;
    series.insert(at, std::move(first));
  }
}

auto ErrorKey(const IoErrorSeries& s) { return std::tie(s.device, s.op, s.error); }
auto ShutdownKey(const FilesystemShutdownSeries& s) { return std::tie(s.device, s.fstype); }
auto SenseKey(const ScsiSenseSeries& s) { return std::tie(s.device, s.sense_key); }

// Series no kernel line makes (a file written before the parsers took only
// the kernel's names, or by hand): dropped, so that a forged kind does not
// come back as a series at every start.
void DropSeriesOfUnknownNames(KmsgCounts& counts) {
  using collectors::IsKernelDiskName;
  std::erase_if(counts.errors, [](const IoErrorSeries& s) {
    return !IsKernelDiskName(s.device) ||
           !(s.buffer ? s.error == "buffer" : IsBlockStatusName(s.error));
  });
  std::erase_if(counts.shutdowns, [](const FilesystemShutdownSeries& s) {
    return !IsKernelDiskName(s.device) || (s.fstype != "xfs" && s.fstype != "ext4");
  });
  std::erase_if(counts.senses, [](const ScsiSenseSeries& s) {
    return !IsKernelDiskName(s.device) || !collectors::IsScsiSenseKeyName(s.sense_key);
  });
}

}  // namespace

void KmsgCounts::Add(const std::string& device, const std::string& op, const std::string& error,
                     bool buffer) {
  CountOne(errors, std::tie(device, op, error), ErrorKey,
           IoErrorSeries{device, op, error, buffer, 0});
}

void KmsgCounts::AddShutdown(const std::string& device, const std::string& fstype) {
  CountOne(shutdowns, std::tie(device, fstype), ShutdownKey,
           FilesystemShutdownSeries{device, fstype, 0});
}

void KmsgCounts::AddSense(const std::string& device, const std::string& sense_key) {
  CountOne(senses, std::tie(device, sense_key), SenseKey, ScsiSenseSeries{device, sense_key, 0});
}

std::string KmsgCountsJson(const KmsgCounts& counts) {
  nlohmann::json errors = nlohmann::json::array();
  for (const IoErrorSeries& s : counts.errors) {
    errors.push_back({{"device", s.device},
                      {"op", s.op},
                      {"error", s.error},
                      {"buffer", s.buffer},
                      {"count", s.count}});
  }
  nlohmann::json shutdowns = nlohmann::json::array();
  for (const FilesystemShutdownSeries& s : counts.shutdowns) {
    shutdowns.push_back({{"device", s.device}, {"fstype", s.fstype}, {"count", s.count}});
  }
  nlohmann::json senses = nlohmann::json::array();
  for (const ScsiSenseSeries& s : counts.senses) {
    senses.push_back({{"device", s.device}, {"sense_key", s.sense_key}, {"count", s.count}});
  }
  nlohmann::json doc = {
      {"boot_id", counts.boot_id},
      {"errors", errors},
      {"shutdowns", shutdowns},
      {"senses", senses},
      {"suppressed",
       {{"request", counts.suppressed_requests}, {"buffer", counts.suppressed_buffers}}}};
  doc["sequence"] = counts.sequence ? nlohmann::json(*counts.sequence) : nlohmann::json(nullptr);
  return doc.dump() + "\n";
}

namespace {

// What a file iowatch wrote holds at most: an entry's fields are three
// levels down ({"errors": [{"count": ...}]}), and a file of
// kMaxKmsgCountsBytes about 60,000 values.
constexpr int kMaxDepth = 3;
constexpr size_t kMaxValues = 100'000;
// A device, op, kind or sense key as the kernel prints one is a few dozen bytes.
constexpr size_t kMaxNameBytes = 256;

// Walks the text before anything is built, and stops it at nesting deeper
// than an entry's fields or more values than such a file holds: a DOM of 60
// MiB of '[' took 4.6 GiB.
class ShapeCheck final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::string problem;  // "" while the text is within bounds and well-formed

  bool null() override { return Value(); }
  bool boolean(bool /*value*/) override { return Value(); }
  bool number_integer(number_integer_t /*value*/) override { return Value(); }
  bool number_unsigned(number_unsigned_t /*value*/) override { return Value(); }
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return Value(); }
  bool string(string_t& /*value*/) override { return Value(); }
  bool binary(binary_t& /*value*/) override { return Value(); }
  bool start_object(std::size_t /*elements*/) override { return Open(); }
  bool key(string_t& /*value*/) override { return true; }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t /*elements*/) override { return Open(); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& e) override {
    problem = e.what();
    return false;
  }

 private:
  bool Value() {
    if (++values_ <= kMaxValues) return true;
    problem = fmt::format("more than {} values", kMaxValues);
    return false;
  }
  bool Open() {
    if (++depth_ > kMaxDepth) {
      problem = fmt::format("nested deeper than {} levels", kMaxDepth);
      return false;
    }
    return Value();
  }
  bool Close() {
    --depth_;
    return true;
  }
  int depth_ = 0;
  size_t values_ = 0;
};

// A field that is missing, of another type or out of range.
class InvalidField : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

const nlohmann::json& Field(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) {
    throw InvalidField(
        fmt::format("expected an object with \"{}\", found {}", key, object.type_name()));
  }
  const auto it = object.find(key);
  if (it == object.end()) throw InvalidField(fmt::format("\"{}\" is missing", key));
  return *it;
}

uint64_t Unsigned(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = Field(object, key);
  if (!value.is_number_unsigned()) {
    throw InvalidField(
        fmt::format("\"{}\": expected an integer of at least 0, found {}", key,
                    value.is_number() ? value.dump() : std::string(value.type_name())));
  }
  return value.get<uint64_t>();
}

bool Bool(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = Field(object, key);
  if (!value.is_boolean()) {
    throw InvalidField(
        fmt::format("\"{}\": expected true or false, found {}", key, value.type_name()));
  }
  return value.get<bool>();
}

// A name as the kernel prints one: a string of 1 to kMaxNameBytes bytes.
std::string Name(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = Field(object, key);
  if (!value.is_string()) {
    throw InvalidField(fmt::format("\"{}\": expected a string, found {}", key, value.type_name()));
  }
  const auto& text = value.get_ref<const std::string&>();
  if (text.empty() || text.size() > kMaxNameBytes) {
    throw InvalidField(
        fmt::format("\"{}\": expected 1 to {} bytes, found {}", key, kMaxNameBytes, text.size()));
  }
  return text;
}

// The array `key` holds; an empty one when it is absent and `optional`.
const nlohmann::json& Array(const nlohmann::json& doc, const char* key, bool optional) {
  static const nlohmann::json kNone = nlohmann::json::array();
  if (optional && !doc.contains(key)) return kNone;
  const nlohmann::json& value = Field(doc, key);
  if (!value.is_array()) {
    throw InvalidField(fmt::format("\"{}\": expected an array, found {}", key, value.type_name()));
  }
  return value;
}

// One series per key, kept sorted: a file that names one twice keeps the
// larger count (never a duplicate series in /metrics, and never a counter
// that goes back from what either said).
template <class Series, class KeyOf>
void SortAndMerge(std::vector<Series>& series, KeyOf key_of) {
  std::ranges::stable_sort(series, {}, key_of);
  std::vector<Series> merged;
  merged.reserve(series.size());
  for (Series& s : series) {
    if (!merged.empty() && key_of(merged.back()) == key_of(s)) {
      merged.back().count = std::max(merged.back().count, s.count);
    } else {
      merged.push_back(std::move(s));
    }
  }
  series = std::move(merged);
}

// Each record counted adds one to one series, and a boot's records are
// numbered from 0: more than sequence + 1 in all was never counted.
void CheckTotal(const KmsgCounts& counts) {
  uint64_t total = 0;
  bool overflow = false;
  const auto add = [&](const auto& all) {
    for (const auto& s : all) overflow |= __builtin_add_overflow(total, s.count, &total);
  };
  add(counts.errors);
  add(counts.shutdowns);
  add(counts.senses);
  if (overflow || (total > 0 && (!counts.sequence || total - 1 > *counts.sequence))) {
    throw InvalidField(
        fmt::format("the counts add up to {}, more than the records up to \"sequence\" ({})",
                    overflow ? std::string("more than 2^64") : std::to_string(total),
                    counts.sequence ? std::to_string(*counts.sequence) : std::string("null")));
  }
}

KmsgCounts CountsOf(const nlohmann::json& doc) {
  KmsgCounts counts;
  counts.boot_id = Name(doc, "boot_id");
  if (!Field(doc, "sequence").is_null()) counts.sequence = Unsigned(doc, "sequence");
  for (const nlohmann::json& e : Array(doc, "errors", false)) {
    counts.errors.push_back({Name(e, "device"), Name(e, "op"), Name(e, "error"), Bool(e, "buffer"),
                             Unsigned(e, "count")});
  }
  if (doc.contains("suppressed")) {
    const nlohmann::json& suppressed = Field(doc, "suppressed");
    counts.suppressed_requests = Unsigned(suppressed, "request");
    counts.suppressed_buffers = Unsigned(suppressed, "buffer");
  }
  for (const nlohmann::json& e : Array(doc, "shutdowns", true)) {
    counts.shutdowns.push_back({Name(e, "device"), Name(e, "fstype"), Unsigned(e, "count")});
  }
  for (const nlohmann::json& e : Array(doc, "senses", true)) {
    counts.senses.push_back({Name(e, "device"), Name(e, "sense_key"), Unsigned(e, "count")});
  }
  DropSeriesOfUnknownNames(counts);
  SortAndMerge(counts.errors, ErrorKey);
  SortAndMerge(counts.shutdowns, ShutdownKey);
  SortAndMerge(counts.senses, SenseKey);
  CheckTotal(counts);
  return counts;
}

}  // namespace

Result<KmsgCounts> ReadKmsgCounts(const std::string& path) {
  // The daemon's own file: a regular one, not reached through a symlink (a
  // FIFO would block, a device never end), of bounded size.
  auto text = ReadFile(path, {.open_error = "cannot open the kmsg counts",
                              .read_error = "cannot read the kmsg counts",
                              .max_bytes = kMaxKmsgCountsBytes,
                              .follow_symlinks = false});
  if (!text) return ErrorOf(text);
  const auto invalid = [&](const std::string& what) {
    return std::unexpected(Error::Parse(
        "expected iowatch's kmsg counts (boot_id, sequence, errors): " + what, path, 1));
  };
  ShapeCheck shape;
  if (!nlohmann::json::sax_parse(*text, &shape)) return invalid(shape.problem);
  try {
    return CountsOf(nlohmann::json::parse(*text));
  } catch (const nlohmann::json::exception& e) {
    return invalid(e.what());
  } catch (const InvalidField& e) {
    return invalid(e.what());
  }
}

}  // namespace iowatch::daemon
