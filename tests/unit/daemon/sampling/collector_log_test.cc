#include "daemon/sampling/collector_log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace iowatch::daemon {
namespace {

CollectorStatus Failed(std::string error) {
  CollectorStatus s{"diskstats", 0, false, 0, {}, {}};
  s.error = std::move(error);
  return s;
}

// Adversarial test: a missing diskstats logged the same warning
// every sample, without the path or errno.
TEST(CollectorLog, AFailureIsLoggedOncePerChangeWithItsCause) {
  std::vector<std::string> lines;
  CollectorLog log([&](CollectorLog::Level level, const std::string& line) {
    lines.push_back((level == CollectorLog::Level::kWarn ? "W " : "I ") + line);
  });
  const std::string missing = "/proc/diskstats: cannot open: No such file or directory";
  for (int i = 0; i < 5; ++i) log.Note({Failed(missing)});
  log.Note({Failed("/proc/diskstats: cannot read: expected a regular file, found a FIFO")});
  log.Note({CollectorStatus{"diskstats", 0, true, 0, {}, {}}});
  log.Note({CollectorStatus{"diskstats", 0, true, 0, {}, {}}});
  log.Note({Failed(missing)});
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "W collector diskstats failed: " + missing,
                       "W collector diskstats failed: /proc/diskstats: cannot read: expected a "
                       "regular file, found a FIFO",
                       "I collector diskstats recovered",
                       "W collector diskstats failed: " + missing,
                   }));
}

TEST(CollectorLog, AMalformedLineIsLoggedWhenItChanges) {
  std::vector<std::string> lines;
  CollectorLog log([&](CollectorLog::Level, const std::string& line) { lines.push_back(line); });
  CollectorStatus s{"meminfo", 0, true, 1, {}, {}};
  s.parse_error = "/proc/meminfo:3: expected 'Name: <unsigned> [kB]', found 'x'";
  log.Note({s});
  log.Note({s});
  CollectorStatus clean{"meminfo", 0, true, 1, {}, {}};
  log.Note({clean});
  s.parse_error = "/proc/meminfo:4: expected 'Name: <unsigned> [kB]', found 'y'";
  log.Note({s});
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "collector meminfo skipped a malformed line: /proc/meminfo:3: expected "
                       "'Name: <unsigned> [kB]', found 'x'",
                       "collector meminfo skipped a malformed line: /proc/meminfo:4: expected "
                       "'Name: <unsigned> [kB]', found 'y'",
                   }));
}

}  // namespace
}  // namespace iowatch::daemon
