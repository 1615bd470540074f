// CollectorLog: what the log says about collectors, once per change. A
// diskstats that vanished fails every sample; the log says so when it starts
// failing (with the path and errno), when the cause changes and when it
// recovers, never once per sample. A malformed line is logged (path:line)
// when it differs from the last one logged for that collector.
// Thread-safety: one owner (the sampling thread).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "daemon/sampling/snapshot.h"

namespace iowatch::daemon {

class CollectorLog {
 public:
  enum class Level { kInfo, kWarn };
  using Sink = std::function<void(Level, const std::string&)>;

  explicit CollectorLog(Sink sink) : sink_(std::move(sink)) {}

  void Note(const std::vector<CollectorStatus>& statuses);

 private:
  struct Logged {
    std::string error;
    std::string parse_error;
  };
  Sink sink_;
  std::map<std::string, Logged, std::less<>> logged_;
};

}  // namespace iowatch::daemon
