#include "probes/store/store_tracker_json.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace iowatch::probes::internal {

using nlohmann::json;

json TrackerToJson(const std::vector<RegressionTracker::Entry>& entries) {
  json tracker = json::array();
  for (const auto& [op, metric, s] : entries) {
    tracker.push_back({{"op", op},
                       {"metric", metric},
                       {"regressed", s.regressed},
                       {"bad_streak", s.bad_streak},
                       {"good_streak", s.good_streak},
                       {"shift", std::isfinite(s.shift) ? json(s.shift) : json(nullptr)},
                       {"bad_since_ms", s.bad_since_ms},
                       {"raised_ms", s.raised_ms},
                       {"since_ms", s.since_ms}});
  }
  return tracker;
}

std::vector<RegressionTracker::Entry> TrackerFromJson(const json& doc) {
  std::vector<RegressionTracker::Entry> entries;
  for (const json& e : doc) {
    const json& shift = e.at("shift");
    entries.push_back({e.at("op").get<std::string>(),
                       e.at("metric").get<std::string>(),
                       {e.at("regressed").get<bool>(), e.at("bad_streak").get<uint32_t>(),
                        e.at("good_streak").get<uint32_t>(),
                        shift.is_null() ? RegressionTracker::kNoShift : shift.get<double>(),
                        // Absent in states stored before they were kept.
                        e.value("bad_since_ms", int64_t{0}), e.value("raised_ms", int64_t{0}),
                        e.value("since_ms", int64_t{0})}});
  }
  return entries;
}

}  // namespace iowatch::probes::internal
