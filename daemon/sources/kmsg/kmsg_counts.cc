#include "daemon/sources/kmsg/kmsg_counts.h"

#include <algorithm>
#include <nlohmann/json.hpp>
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

Result<KmsgCounts> ReadKmsgCounts(const std::string& path) {
  auto text = ReadFile(path);
  if (!text) return ErrorOf(text);
  try {
    const nlohmann::json doc = nlohmann::json::parse(*text);
    KmsgCounts counts;
    counts.boot_id = doc.at("boot_id").get<std::string>();
    if (!doc.at("sequence").is_null()) counts.sequence = doc.at("sequence").get<uint64_t>();
    for (const nlohmann::json& e : doc.at("errors")) {
      counts.errors.push_back({e.at("device").get<std::string>(), e.at("op").get<std::string>(),
                               e.at("error").get<std::string>(), e.at("buffer").get<bool>(),
                               e.at("count").get<uint64_t>()});
    }
    if (const auto suppressed = doc.find("suppressed"); suppressed != doc.end()) {
      counts.suppressed_requests = suppressed->at("request").get<uint64_t>();
      counts.suppressed_buffers = suppressed->at("buffer").get<uint64_t>();
    }
    if (const auto shutdowns = doc.find("shutdowns"); shutdowns != doc.end()) {
      for (const nlohmann::json& e : *shutdowns) {
        counts.shutdowns.push_back({e.at("device").get<std::string>(),
                                    e.at("fstype").get<std::string>(),
                                    e.at("count").get<uint64_t>()});
      }
    }
    if (const auto senses = doc.find("senses"); senses != doc.end()) {
      for (const nlohmann::json& e : *senses) {
        counts.senses.push_back({e.at("device").get<std::string>(),
                                 e.at("sense_key").get<std::string>(),
                                 e.at("count").get<uint64_t>()});
      }
    }
    DropSeriesOfUnknownNames(counts);
    std::ranges::sort(counts.errors, {}, ErrorKey);
    std::ranges::sort(counts.shutdowns, {}, ShutdownKey);
    std::ranges::sort(counts.senses, {}, SenseKey);
    return counts;
  } catch (const nlohmann::json::exception& e) {
    return std::unexpected(Error::Parse(
        std::string("expected iowatch's kmsg counts (boot_id, sequence, errors): ") + e.what(),
        path, 1));
  }
}

}  // namespace iowatch::daemon
