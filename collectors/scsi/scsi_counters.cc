#include "collectors/scsi/scsi_counters.h"

#include <fmt/format.h>

#include <charconv>
#include <string>

namespace iowatch::collectors {
namespace {

constexpr uint64_t kLow32 = 0xffffffffULL;

// "0x1a2\n" -> 0x1a2, its low 32 bits (the kernel sign-extends past 2^31).
Result<uint64_t> ReadHexCounter(const FileTree& sysfs, const std::string& path) {
  auto text = sysfs.Read(path);
  if (!text) return ErrorOf(text);
  std::string_view s = *text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  uint64_t value = 0;
  const bool prefixed = s.starts_with("0x");
  if (prefixed) s.remove_prefix(2);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, 16);
  if (!prefixed || s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return std::unexpected(Error::Parse(
        fmt::format("expected a counter as the kernel prints it (\"0x1a2\"), found {:?}", *text),
        sysfs.PathOf(path).string(), 1));
  }
  return value & kLow32;
}

}  // namespace

Result<ScsiCounters> ReadScsiCounters(const FileTree& sysfs, std::string_view disk) {
  const std::string dir = fmt::format("block/{}/device/", disk);
  if (!sysfs.Exists(dir + "ioerr_cnt")) {
    return std::unexpected(Error::NotFound("no SCSI command counters", dir));
  }
  ScsiCounters c;
  uint64_t* const fields[] = {&c.requests, &c.done, &c.errors};
  const char* const names[] = {"iorequest_cnt", "iodone_cnt", "ioerr_cnt"};
  for (size_t i = 0; i < std::size(fields); ++i) {
    auto value = ReadHexCounter(sysfs, dir + names[i]);
    if (!value) return ErrorOf(value);
    *fields[i] = *value;
  }
  if (sysfs.Exists(dir + "iotmo_cnt")) {
    auto timeouts = ReadHexCounter(sysfs, dir + "iotmo_cnt");
    if (!timeouts) return ErrorOf(timeouts);
    c.timeouts = *timeouts;
  }
  return c;
}

uint64_t ScsiCounterExtender::Extend(uint64_t raw32) {
  raw32 &= kLow32;
  total_ = last_raw_ ? total_ + ((raw32 - *last_raw_) & kLow32) : raw32;
  last_raw_ = raw32;
  return total_;
}

}  // namespace iowatch::collectors
