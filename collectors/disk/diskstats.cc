#include "collectors/disk/diskstats.h"

#include <algorithm>
#include <array>
#include <span>

#include "collectors/text/text_scan.h"

namespace iowatch::collectors {
namespace {

constexpr size_t kMaxFields = 17;

// Every block device is a directory of /sys/block or /sys/class/block, so its
// name fits NAME_MAX; a longer one is not a kernel's line.
constexpr size_t kMaxDeviceNameBytes = 255;

// Longest line accepted in full: "major minor name" + 17 counters; a future
// kernel's extra counters are counted but not stored.
constexpr size_t kMaxLineFields = 3 + kMaxFields;

Result<DiskCounters> CountersFromFields(std::span<const std::string_view> fields, size_t n,
                                        std::string_view path, int line) {
  if (n != 4 && n != 11 && n != 15 && n < 17) {
    return MakeError(ErrorCode::kParse,
                     fmt::format("expected 4, 11, 15 or 17 counters, found {}", n),
                     std::string(path), line);
  }
  std::array<uint64_t, kMaxFields> v{};
  const size_t used = std::min(n, kMaxFields);
  for (size_t i = 0; i < used; ++i) {
    const auto value = ParseU64(fields[i]);
    if (!value) {
      return MakeError(
          ErrorCode::kParse,
          fmt::format("counter {} is '{}', expected an unsigned integer", i + 1, fields[i]),
          std::string(path), line);
    }
    v[i] = *value;
  }
  DiskCounters c;
  if (n == 4) {  // pre-2.6.25 partition line: reads, sectors read, writes, sectors written
    c.reads = v[0];
    c.read_sectors = v[1];
    c.writes = v[2];
    c.write_sectors = v[3];
    c.field_count = 4;
    return c;
  }
  c.reads = v[0];
  c.reads_merged = v[1];
  c.read_sectors = v[2];
  c.read_ms = v[3];
  c.writes = v[4];
  c.writes_merged = v[5];
  c.write_sectors = v[6];
  c.write_ms = v[7];
  c.in_flight = v[8];
  c.io_ms = v[9];
  c.weighted_io_ms = v[10];
  c.field_count = 11;
  if (n >= 15) {
    c.discards = v[11];
    c.discards_merged = v[12];
    c.discard_sectors = v[13];
    c.discard_ms = v[14];
    c.field_count = 15;
  }
  if (n >= 17) {
    c.flushes = v[15];
    c.flush_ms = v[16];
    c.field_count = 17;
  }
  return c;
}

}  // namespace

Result<DiskCounters> ParseDiskCounters(std::string_view text, std::string_view path) {
  const size_t newline = text.find('\n');
  const std::string_view first_line = text.substr(0, newline);
  std::array<std::string_view, kMaxFields> fields;
  const size_t n = SplitFieldsInto(first_line, fields);
  return CountersFromFields(std::span(fields).first(std::min(n, kMaxFields)), n, path, 1);
}

Diskstats ParseDiskstats(std::string_view text, std::string_view path) {
  Diskstats result;
  ForEachLine(text, [&](std::string_view line, int line_number) {
    std::array<std::string_view, kMaxLineFields> fields;
    const size_t n = SplitFieldsInto(line, fields);
    if (n == 0) return;  // blank lines are not an error
    if (n < 3) {
      result.skipped.push_back(
          Error::Parse(fmt::format("expected 'major minor name counters...', found "
                                   "{} fields",
                                   n),
                       std::string(path), line_number));
      return;
    }
    const auto major = ParseU64(fields[0]);
    const auto minor = ParseU64(fields[1]);
    if (!major || !minor || *major > UINT32_MAX || *minor > UINT32_MAX) {
      result.skipped.push_back(Error::Parse(
          fmt::format("expected numeric major and minor, found '{} {}'", fields[0], fields[1]),
          std::string(path), line_number));
      return;
    }
    if (fields[2].size() > kMaxDeviceNameBytes) {
      result.skipped.push_back(
          Error::Parse(fmt::format("expected a device name of at most {} bytes, "
                                   "found one of {}",
                                   kMaxDeviceNameBytes, fields[2].size()),
                       std::string(path), line_number));
      return;
    }
    auto counters = CountersFromFields(
        std::span(fields).subspan(3, std::min(n, kMaxLineFields) - 3), n - 3, path, line_number);
    if (!counters) {
      result.skipped.push_back(std::move(counters.error()));
      return;
    }
    result.disks.push_back(DiskStat{static_cast<uint32_t>(*major), static_cast<uint32_t>(*minor),
                                    std::string(fields[2]), *counters});
  });
  return result;
}

}  // namespace iowatch::collectors
