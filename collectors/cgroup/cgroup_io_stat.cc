#include "collectors/cgroup/cgroup_io_stat.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "collectors/text/text_scan.h"

namespace iowatch::collectors {
namespace {

std::optional<std::pair<uint32_t, uint32_t>> ParseDevice(std::string_view field) {
  const size_t colon = field.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto major = ParseU64(field.substr(0, colon));
  const auto minor = ParseU64(field.substr(colon + 1));
  if (!major || !minor || *major > UINT32_MAX || *minor > UINT32_MAX) return std::nullopt;
  return std::pair{static_cast<uint32_t>(*major), static_cast<uint32_t>(*minor)};
}

Error ParseError(std::string_view expected, std::string_view line, std::string_view path,
                 int number) {
  return Error::Parse(fmt::format("expected '{}', found '{}'", expected, line), std::string(path),
                      number);
}

constexpr std::string_view kIoStatExpected =
    "MAJ:MIN rbytes=N wbytes=N rios=N wios=N dbytes=N dios=N";

std::optional<uint64_t>* ControllerField(CgroupIoControllers& c, std::string_view key) {
  if (key == "cost.usage") return &c.cost_usage_us;
  if (key == "cost.wait") return &c.cost_wait_us;
  if (key == "cost.indebt") return &c.cost_indebt_us;
  if (key == "cost.indelay") return &c.cost_indelay_us;
  if (key == "avg_lat") return &c.latency_avg_us;
  return nullptr;
}

uint64_t* IoStatField(CgroupDeviceIo& io, std::string_view key) {
  if (key == "rbytes") return &io.read_bytes;
  if (key == "wbytes") return &io.write_bytes;
  if (key == "rios") return &io.reads;
  if (key == "wios") return &io.writes;
  if (key == "dbytes") return &io.discard_bytes;
  if (key == "dios") return &io.discards;
  return nullptr;
}

CgroupDeviceIo& EntryFor(std::vector<CgroupDeviceIo>& out, std::pair<uint32_t, uint32_t> dev) {
  const auto found = std::ranges::find_if(out, [&](const CgroupDeviceIo& io) {
    return io.major == dev.first && io.minor == dev.second;
  });
  if (found != out.end()) return *found;
  out.push_back({.major = dev.first, .minor = dev.second});
  return out.back();
}

// One v1 file into `out`: Read/Write/Discard into the fields `fields` names.
Status ParseBlkioFile(std::string_view text, std::string_view path, bool bytes,
                      std::vector<CgroupDeviceIo>& out) {
  constexpr std::string_view kExpected = "MAJ:MIN Read|Write|Sync|Async|Discard|Total N";
  std::optional<Error> failure;
  ForEachLine(text, [&](std::string_view line, int number) {
    if (failure) return;
    const std::vector<std::string_view> f = SplitFields(line);
    if (f.empty() || (f.size() == 2 && f[0] == "Total")) return;  // the cgroup's grand total
    const auto dev = f.size() == 3 ? ParseDevice(f[0]) : std::nullopt;
    const auto value = f.size() == 3 ? ParseU64(f[2]) : std::nullopt;
    if (!dev || !value) {
      failure = ParseError(kExpected, line, path, number);
      return;
    }
    CgroupDeviceIo& io = EntryFor(out, *dev);
    if (f[1] == "Read") (bytes ? io.read_bytes : io.reads) = *value;
    if (f[1] == "Write") (bytes ? io.write_bytes : io.writes) = *value;
    if (f[1] == "Discard") (bytes ? io.discard_bytes : io.discards) = *value;
  });
  if (failure) return std::unexpected(*failure);
  return {};
}

}  // namespace

Result<std::vector<CgroupDeviceIo>> ParseIoStat(std::string_view text, std::string_view path) {
  std::vector<CgroupDeviceIo> out;
  std::optional<Error> failure;
  ForEachLine(text, [&](std::string_view line, int number) {
    if (failure) return;
    const std::vector<std::string_view> f = SplitFields(line);
    if (f.empty()) return;
    const auto dev = ParseDevice(f[0]);
    if (!dev) {
      failure = ParseError(kIoStatExpected, line, path, number);
      return;
    }
    CgroupDeviceIo io{.major = dev->first, .minor = dev->second};
    for (size_t i = 1; i < f.size(); ++i) {
      const size_t equals = f[i].find('=');
      if (equals == std::string_view::npos) continue;
      const std::string_view key = f[i].substr(0, equals);
      uint64_t* field = IoStatField(io, key);
      std::optional<uint64_t>* controller = ControllerField(io.controllers, key);
      if (field == nullptr && controller == nullptr) continue;  // cost.vrate, depth, win…
      const auto value = ParseU64(f[i].substr(equals + 1));
      if (!value) {
        failure = ParseError(kIoStatExpected, line, path, number);
        return;
      }
      if (field != nullptr) *field = *value;
      if (controller != nullptr) *controller = value;
    }
    out.push_back(io);
  });
  if (failure) return std::unexpected(*failure);
  return out;
}

Result<std::vector<CgroupDeviceIo>> ParseBlkioThrottle(std::string_view service_bytes,
                                                       std::string_view bytes_path,
                                                       std::string_view serviced,
                                                       std::string_view serviced_path) {
  std::vector<CgroupDeviceIo> out;
  if (Status s = ParseBlkioFile(service_bytes, bytes_path, true, out); !s) {
    return ErrorOf(s);
  }
  if (Status s = ParseBlkioFile(serviced, serviced_path, false, out); !s) {
    return ErrorOf(s);
  }
  return out;
}

}  // namespace iowatch::collectors
