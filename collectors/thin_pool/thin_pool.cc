#include "collectors/thin_pool/thin_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "collectors/text/sysfs_text.h"
#include "collectors/text/text_scan.h"
#include "common/utf8.h"

namespace iowatch::collectors {
namespace {

constexpr std::string_view kThinPoolTarget = "thin-pool";
constexpr std::string_view kNoDevices = "No devices found";

std::unexpected<Error> ThinParseError(std::string_view path, int line, std::string_view expected,
                                      std::string_view found) {
  return std::unexpected(
      Error::Parse(fmt::format("expected {}, found '{}'", expected, ToValidUtf8(found)),
                   std::string(path), line));
}

// One line of dmsetup's listing: "NAME: START LEN TARGET PARAMS...".
struct DmLine {
  std::string_view name;
  uint64_t start = 0;
  uint64_t length = 0;
  std::string_view target;
  std::vector<std::string_view> params;
};

// The line split, or what was expected of it. dm names may hold ':' (docker's
// "docker-253:10-…"), never ": ", which dmsetup writes after the name.
Result<DmLine> SplitDmLine(std::string_view line, std::string_view path, int number) {
  const size_t colon = line.find(": ");
  const std::vector<std::string_view> fields = colon == std::string_view::npos
                                                   ? std::vector<std::string_view>{}
                                                   : SplitFields(line.substr(colon + 2));
  const auto start = fields.size() >= 3 ? ParseU64(fields[0]) : std::nullopt;
  const auto length = fields.size() >= 3 ? ParseU64(fields[1]) : std::nullopt;
  if (colon == 0 || !start || !length) {
    return ThinParseError(path, number, "'NAME: START LENGTH TARGET [PARAMS...]'", line);
  }
  return DmLine{.name = line.substr(0, colon),
                .start = *start,
                .length = *length,
                .target = fields[2],
                .params = std::vector<std::string_view>(fields.begin() + 3, fields.end())};
}

// A dm name as a label value: valid UTF-8, control characters as spaces.
std::string LabelText(std::string_view name) {
  std::string text = ToValidUtf8(name);
  while (const std::optional<size_t> control = ControlCharacterAt(text)) text[*control] = ' ';
  return text;
}

// Calls parse(dm_line, line_number) for each thin-pool line, skipping the
// others and "No devices found"; the first error stops it. A name listed
// twice is an error: a thin-pool target is its device's only one
// (DM_TARGET_SINGLETON).
template <typename Parse>
Status ForEachThinPoolLine(std::string_view text, std::string_view path, Parse parse) {
  Status status;
  std::set<std::string_view> names;
  ForEachLine(text, [&](std::string_view raw, int number) {
    const std::string_view line = TrimSysfsText(raw);
    if (!status || line.empty() || line == kNoDevices) return;
    auto split = SplitDmLine(line, path, number);
    if (!split) {
      status = ErrorOf(split);
      return;
    }
    if (split->target != kThinPoolTarget) return;
    if (!names.insert(split->name).second) {
      status = ThinParseError(path, number, "one thin-pool line per device", line);
      return;
    }
    status = parse(*split, number, line);
  });
  return status;
}

// "USED/TOTAL".
std::optional<std::pair<uint64_t, uint64_t>> ParseRatio(std::string_view field) {
  const size_t slash = field.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto used = ParseU64(field.substr(0, slash));
  const auto total = ParseU64(field.substr(slash + 1));
  if (!used || !total) return std::nullopt;
  return std::pair{*used, *total};
}

// One of two words: true for `yes`, false for `no`; nullopt for neither.
std::optional<bool> ParseWord(std::string_view field, std::string_view yes, std::string_view no) {
  if (field == yes) return true;
  if (field == no) return false;
  return std::nullopt;
}

std::optional<ThinPoolMode> ParseMode(std::string_view field) {
  if (field == "rw") return ThinPoolMode::kRw;
  if (field == "ro") return ThinPoolMode::kRo;
  if (field == "out_of_data_space") return ThinPoolMode::kOutOfDataSpace;
  return std::nullopt;
}

// The fields after the held root that a kernel may print, in order; each
// read where present (an older kernel's line stops early). `what` says each
// one's expected words for the error.
struct OptionalStatusFields {
  const std::vector<std::string_view>& params;
  std::string_view path;
  int number;
  std::string_view line;

  template <typename T, typename Read>
  Status Take(size_t index, std::string_view what, Read read, std::optional<T>& out) const {
    if (index >= params.size()) return {};
    out = read(params[index]);
    if (!out) {
      return ThinParseError(path, number, fmt::format("{} (field {})", what, index + 1),
                            params[index]);
    }
    return {};
  }
};

Result<ThinPoolUsage> ParseUsage(const std::vector<std::string_view>& p, std::string_view path,
                                 int number, std::string_view line, ThinPoolMode& mode) {
  constexpr std::string_view kExpected =
      "'<transaction id> <used>/<total metadata blocks> <used>/<total data blocks> <held root|->' "
      "after 'thin-pool', or 'Fail' or 'Error'";
  if (p.size() < 4) return ThinParseError(path, number, kExpected, line);
  const auto transaction = ParseU64(p[0]);
  const auto metadata = ParseRatio(p[1]);
  const auto data = ParseRatio(p[2]);
  const auto root = p[3] == "-" ? std::optional<uint64_t>(0) : ParseU64(p[3]);
  if (!transaction || !metadata || !data || !root) {
    return ThinParseError(path, number, kExpected, line);
  }
  ThinPoolUsage usage{.transaction_id = *transaction,
                      .used_metadata_blocks = metadata->first,
                      .total_metadata_blocks = metadata->second,
                      .used_data_blocks = data->first,
                      .total_data_blocks = data->second,
                      .held_metadata_root = p[3] == "-" ? std::nullopt : root};
  const OptionalStatusFields fields{p, path, number, line};
  std::optional<ThinPoolMode> read_mode;
  Status s = fields.Take(4, "ro, rw or out_of_data_space", ParseMode, read_mode);
  if (s) {
    s = fields.Take(
        5, "discard_passdown or no_discard_passdown",
        [](std::string_view f) { return ParseWord(f, "discard_passdown", "no_discard_passdown"); },
        usage.discard_passdown);
  }
  if (s) {
    s = fields.Take(
        6, "error_if_no_space or queue_if_no_space",
        [](std::string_view f) { return ParseWord(f, "error_if_no_space", "queue_if_no_space"); },
        usage.error_if_no_space);
  }
  if (s) {
    s = fields.Take(
        7, "needs_check or -", [](std::string_view f) { return ParseWord(f, "needs_check", "-"); },
        usage.needs_check);
  }
  if (s) {
    s = fields.Take(8, "the metadata low watermark (a number)", ParseU64,
                    usage.metadata_low_watermark);
  }
  if (!s) return std::unexpected(s.error());
  mode = read_mode.value_or(ThinPoolMode::kRw);
  return usage;
}

Result<ThinPoolStatus> ParseStatusLine(const DmLine& d, int number, std::string_view line,
                                       std::string_view path) {
  ThinPoolStatus status{
      .name = LabelText(d.name), .start_sector = d.start, .length_sectors = d.length};
  if (d.params.size() == 1 && d.params[0] == "Fail") {
    status.mode = ThinPoolMode::kFail;
    return status;
  }
  if (d.params.size() == 1 && d.params[0] == "Error") {
    status.mode = ThinPoolMode::kError;
    return status;
  }
  auto usage = ParseUsage(d.params, path, number, line, status.mode);
  if (!usage) return ErrorOf(usage);
  status.usage = *usage;
  return status;
}

Result<ThinPoolTable> ParseTableLine(const DmLine& d, int number, std::string_view line,
                                     std::string_view path) {
  const auto& p = d.params;
  const auto block = p.size() >= 4 ? ParseU64(p[2]) : std::nullopt;
  const auto low_water = p.size() >= 4 ? ParseU64(p[3]) : std::nullopt;
  if (!block || *block == 0 || !low_water) {
    return ThinParseError(path, number,
                          "'<metadata dev> <data dev> <data block sectors> <low water mark> "
                          "[<#features> <feature>...]' after 'thin-pool'",
                          line);
  }
  ThinPoolTable table{.name = LabelText(d.name),
                      .start_sector = d.start,
                      .length_sectors = d.length,
                      .metadata_device = LabelText(p[0]),
                      .data_device = LabelText(p[1]),
                      .data_block_sectors = *block,
                      .low_water_mark_blocks = *low_water};
  if (p.size() > 4) {
    const auto count = ParseU64(p[4]);
    if (!count || *count != p.size() - 5) {
      return ThinParseError(
          path, number,
          fmt::format("the count of feature arguments that follow ({})", p.size() - 5), p[4]);
    }
    for (size_t i = 5; i < p.size(); ++i) table.features.push_back(LabelText(p[i]));
  }
  return table;
}

// Each thin-pool line parsed by parse_line(dm_line, number, line, path).
template <typename T, typename ParseLine>
Result<std::vector<T>> ParseThinPoolLines(std::string_view text, std::string_view path,
                                          ParseLine parse_line) {
  std::vector<T> items;
  const Status status =
      ForEachThinPoolLine(text, path, [&](const DmLine& d, int number, std::string_view line) {
        auto item = parse_line(d, number, line, path);
        if (!item) return Status(std::unexpected(item.error()));
        items.push_back(std::move(*item));
        return Status();
      });
  if (!status) return std::unexpected(status.error());
  return items;
}

// a × b, or nullopt when it overflows 64 bits.
std::optional<uint64_t> Times(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

}  // namespace

std::string_view ThinPoolModeName(ThinPoolMode mode) {
  return kThinPoolModeNames[static_cast<size_t>(mode)];
}

Result<std::vector<ThinPoolStatus>> ParseThinPoolStatus(std::string_view text,
                                                        std::string_view path) {
  return ParseThinPoolLines<ThinPoolStatus>(text, path, ParseStatusLine);
}

Result<std::vector<ThinPoolTable>> ParseThinPoolTable(std::string_view text,
                                                      std::string_view path) {
  return ParseThinPoolLines<ThinPoolTable>(text, path, ParseTableLine);
}

std::vector<ThinPool> JoinThinPools(std::vector<ThinPoolStatus> statuses,
                                    std::vector<ThinPoolTable> tables) {
  std::map<std::string, ThinPoolTable, std::less<>> by_name;
  for (ThinPoolTable& t : tables) by_name.emplace(t.name, std::move(t));
  std::vector<ThinPool> pools;
  pools.reserve(statuses.size());
  for (ThinPoolStatus& s : statuses) {
    ThinPool pool{.name = s.name, .device = {}, .status = std::move(s), .table = std::nullopt};
    if (const auto it = by_name.find(pool.name); it != by_name.end()) pool.table = it->second;
    pools.push_back(std::move(pool));
  }
  return pools;
}

std::optional<uint64_t> ThinPool::DataBytes() const {
  if (!status.usage || !table) return std::nullopt;
  const auto block = Times(table->data_block_sectors, kThinSectorBytes);
  return block ? Times(status.usage->total_data_blocks, *block) : std::nullopt;
}

std::optional<uint64_t> ThinPool::DataUsedBytes() const {
  if (!status.usage || !table) return std::nullopt;
  const auto block = Times(table->data_block_sectors, kThinSectorBytes);
  return block ? Times(status.usage->used_data_blocks, *block) : std::nullopt;
}

std::optional<uint64_t> ThinPool::MetadataBytes() const {
  if (!status.usage) return std::nullopt;
  return Times(status.usage->total_metadata_blocks, kThinMetadataBlockBytes);
}

std::optional<uint64_t> ThinPool::MetadataUsedBytes() const {
  if (!status.usage) return std::nullopt;
  return Times(status.usage->used_metadata_blocks, kThinMetadataBlockBytes);
}

}  // namespace iowatch::collectors
