// The conditions table of `iowatch baseline show`: one line per run, unknown
// for runs stored before conditions were measured, nothing when none has any.
#include "daemon/cli/baseline/conditions_table.h"

#include <gtest/gtest.h>

namespace iowatch::daemon {
namespace {

probes::RunRecord RunWith(int64_t id, std::optional<probes::RunConditions> conditions) {
  probes::RunRecord run;
  run.id = id;
  run.conditions = conditions;
  return run;
}

TEST(FormatRunConditions, OneLinePerRunWithTheForeignLoad) {
  probes::RunConditions busy;
  busy.seconds = 2;
  busy.device_ios = 3400;
  busy.own_requests = 1000;
  busy.device_bytes = 1000 * 4096 + (20ULL << 20);
  busy.own_bytes = 1000 * 4096;
  busy.device_io_seconds = 2;
  busy.own_io_seconds = 0.5;
  busy.device_busy_seconds = 1.5;
  busy.io_pressure_some = 0.125;
  busy.other_probe = true;
  const std::vector<probes::RunRecord> runs = {RunWith(12, busy), RunWith(3, std::nullopt)};
  EXPECT_EQ(FormatRunConditions(runs),
            "conditions   others  others  others'    disk          io      cpu  other\n"
            "run            IOPS   MiB/s   time %  util %  pressure %  steal %  probe\n"
            "#12            1200    10.0     75.0    75.0        12.5        0  yes\n"
            "#3          unknown\n"
            "\n");
}

TEST(FormatRunConditions, NothingWhenNoRunHasConditions) {
  const std::vector<probes::RunRecord> runs = {RunWith(1, std::nullopt), RunWith(2, std::nullopt)};
  EXPECT_EQ(FormatRunConditions(runs), "");
}

}  // namespace
}  // namespace iowatch::daemon
