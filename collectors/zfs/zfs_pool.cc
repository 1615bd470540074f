#include "collectors/zfs/zfs_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "collectors/text/sysfs_text.h"
#include "collectors/text/text_scan.h"
#include "common/utf8.h"

namespace iowatch::collectors {
namespace {

constexpr size_t kZfsKstatHeaderFields = 7;  // kid type flags ndata data_size crtime snaptime

std::unexpected<Error> ZfsParseError(std::string_view path, int line, std::string_view expected,
                                     std::string_view found) {
  return std::unexpected(Error::Parse(fmt::format("expected {}, found '{}'", expected, found),
                                      std::string(path), line));
}

// Each kstat_io_t field's column in the names line, or the first missing.
Result<std::vector<size_t>> ZfsIoColumns(const std::vector<std::string_view>& names,
                                         std::string_view path, std::string_view line) {
  std::vector<size_t> columns;
  for (const ZfsPoolIoField& field : kZfsPoolIoFields) {
    const auto found = std::ranges::find(names, field.name);
    if (found == names.end()) {
      return ZfsParseError(
          path, 2, fmt::format("the kstat io field names, '{}' among them", field.name), line);
    }
    columns.push_back(static_cast<size_t>(found - names.begin()));
  }
  return columns;
}

// The pool's file parsed into `out`; absent (the pool exported, or a pool
// without that kstat) leaves it nullopt.
template <typename T, typename Parse>
Status ReadZfsPoolFile(const FileTree& procfs, const std::string& relative, Parse parse,
                       std::optional<T>& out) {
  auto text = procfs.Read(relative, kMaxProcfsFileBytes);
  if (!text && text.error().code == ErrorCode::kNotFound) return {};
  if (!text) return ErrorOf(text);
  auto parsed = parse(*text, procfs.PathOf(relative).string());
  if (!parsed) return ErrorOf(parsed);
  out = std::move(*parsed);
  return {};
}

Result<ZfsPool> ReadZfsPool(const FileTree& procfs, const std::string& name) {
  ZfsPool pool{.name = ToValidUtf8(name)};
  const std::string dir = fmt::format("spl/kstat/zfs/{}", name);
  const Status state = ReadZfsPoolFile(procfs, dir + "/state", ParseZfsPoolState, pool.state);
  if (!state) return ErrorOf(state);
  const Status io = ReadZfsPoolFile(procfs, dir + "/io", ParseZfsPoolIo, pool.io);
  if (!io) return ErrorOf(io);
  return pool;
}

}  // namespace

Result<ZfsPoolIo> ParseZfsPoolIo(std::string_view text, std::string_view path) {
  std::vector<std::string_view> lines;
  ForEachLine(text, [&](std::string_view line, int) { lines.push_back(line); });
  if (lines.empty() || SplitFields(lines[0]).size() != kZfsKstatHeaderFields) {
    return ZfsParseError(path, 1, "the kstat header's 7 fields",
                         lines.empty() ? "" : TrimSysfsText(lines[0]));
  }
  if (lines.size() < 3) {
    return ZfsParseError(path, static_cast<int>(lines.size()) + 1,
                         "a line of names, then a line of values", "end of file");
  }
  const std::vector<std::string_view> names = SplitFields(lines[1]);
  const auto columns = ZfsIoColumns(names, path, TrimSysfsText(lines[1]));
  if (!columns) return ErrorOf(columns);
  const std::vector<std::string_view> values = SplitFields(lines[2]);
  const std::string_view found = TrimSysfsText(lines[2]);
  if (values.size() != names.size()) {
    return ZfsParseError(path, 3, fmt::format("{} values, one per name", names.size()), found);
  }
  ZfsPoolIo io;
  for (size_t i = 0; i < std::size(kZfsPoolIoFields); ++i) {
    const auto value = ParseU64(values[(*columns)[i]]);
    if (!value) {
      return ZfsParseError(path, 3,
                           fmt::format("a decimal number for {}", kZfsPoolIoFields[i].name),
                           values[(*columns)[i]]);
    }
    io.*kZfsPoolIoFields[i].value = *value;
  }
  return io;
}

Result<std::string> ParseZfsPoolState(std::string_view text, std::string_view path) {
  const std::string_view first = text.substr(0, text.find('\n'));
  const std::string_view state = TrimSysfsText(first);
  if (state.empty() || SplitFields(state).size() != 1) {
    return ZfsParseError(path, 1, "the pool's state (ONLINE, DEGRADED...)", state);
  }
  std::string sanitized = ToValidUtf8(state);
  while (const std::optional<size_t> control = ControlCharacterAt(sanitized)) {
    sanitized[*control] = ' ';
  }
  return sanitized;
}

Result<std::vector<ZfsPool>> ReadZfsPools(const FileTree& procfs) {
  auto names = procfs.ListDirectories("spl/kstat/zfs");
  if (!names) return ErrorOf(names);
  std::ranges::sort(*names);
  std::vector<ZfsPool> pools;
  for (const std::string& name : *names) {
    auto pool = ReadZfsPool(procfs, name);
    if (!pool) return ErrorOf(pool);
    if (!pool->state && !pool->io) continue;  // exported while read
    pools.push_back(std::move(*pool));
  }
  return pools;
}

std::string NodeExporterZfsPoolState(const ZfsPool& pool) {
  std::string state = pool.state.value_or("");
  for (char& c : state) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return state;
}

}  // namespace iowatch::collectors
