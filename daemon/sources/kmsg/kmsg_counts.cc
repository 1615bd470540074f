#include "daemon/sources/kmsg/kmsg_counts.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/file_tree.h"

namespace iowatch::daemon {

void KmsgCounts::Add(const std::string& device, const std::string& op, const std::string& error,
                     bool buffer) {
  const auto key = std::tie(device, op, error);
  const auto at = std::ranges::lower_bound(
      errors, key, {}, [](const IoErrorSeries& s) { return std::tie(s.device, s.op, s.error); });
  if (at != errors.end() && std::tie(at->device, at->op, at->error) == key) {
    ++at->count;
  } else {
    errors.insert(at, IoErrorSeries{device, op, error, buffer, 1});
  }
}

void KmsgCounts::AddShutdown(const std::string& device, const std::string& fstype) {
  const auto key = std::tie(device, fstype);
  const auto of = [](const FilesystemShutdownSeries& s) { return std::tie(s.device, s.fstype); };
  const auto at = std::ranges::lower_bound(shutdowns, key, {}, of);
  if (at != shutdowns.end() && of(*at) == key) {
    ++at->count;
  } else {
    shutdowns.insert(at, FilesystemShutdownSeries{device, fstype, 1});
  }
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
  nlohmann::json doc = {
      {"boot_id", counts.boot_id},
      {"errors", errors},
      {"shutdowns", shutdowns},
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
      std::ranges::sort(counts.shutdowns, {}, [](const FilesystemShutdownSeries& s) {
        return std::tie(s.device, s.fstype);
      });
    }
    std::ranges::sort(counts.errors, {},
                      [](const IoErrorSeries& s) { return std::tie(s.device, s.op, s.error); });
    return counts;
  } catch (const nlohmann::json::exception& e) {
    return std::unexpected(Error::Parse(
        std::string("expected iowatch's kmsg counts (boot_id, sequence, errors): ") + e.what(),
        path, 1));
  }
}

}  // namespace iowatch::daemon
