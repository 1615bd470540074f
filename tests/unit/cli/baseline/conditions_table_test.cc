// The conditions table of `iowatch baseline show`: one line per run, unknown
// for runs stored before conditions were measured, nothing when none has any.
#include "cli/baseline/conditions_table.h"

#include <gtest/gtest.h>

#include <map>

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
  probes::RunConditions calm = busy;
  calm.device_ios = 1000;
  calm.device_bytes = 1000 * 4096;
  calm.other_probe = false;
  calm.cpu_wait = 0.0625;
  probes::RunConditions waited = calm;
  waited.cpu_wait = 0.5;
  busy.before = probes::LoadWindow{1, 100, 100 * 4096, 0.01};
  // Calm during the run, 3,000 requests of 16 KiB in the second before it:
  // 3,750 weighted requests/s, band 7.
  probes::RunConditions crowded = calm;
  crowded.before = probes::LoadWindow{1, 3000, 3000 * 16384, 0.5};
  const std::vector<probes::RunRecord> runs = {RunWith(12, busy), RunWith(3, std::nullopt),
                                               RunWith(4, calm), RunWith(5, waited),
                                               RunWith(6, crowded)};
  // Run 12: others' 2,400 requests and 20 MiB in 2 s weigh (2,400 + 320) / 2
  // = 1,360 requests/s: band 6, [1024, 2048); 2,720 of 3,782.5 units of work.
  EXPECT_EQ(FormatRunConditions(runs, {}, {0}),
            "conditions  others  others  others'  before  before    disk          io     cpu      "
            "cpu  other  class    judged\n"
            "run           IOPS   MiB/s   work %    IOPS   MiB/s  util %  pressure %  wait %  "
            "steal %  probe\n"
            "#12           1200    10.0     71.9     100   0.391    75.0        12.5       -       "
            " 0  yes    band 6   no: no baseline yet\n"
            "#3               -       -        -       -       -       -           -       -       "
            " -  -      unknown  no: conditions unknown\n"
            "#4               0       0        0       -       -    75.0        12.5    6.25       "
            " 0  no     clean    yes\n"
            "#5               0       0        0       -       -    75.0        12.5    50.0       "
            " 0  no     cpu      no: CPU contended\n"
            "#6               0       0        0    3000    46.9    75.0        12.5    6.25       "
            " 0  no     band 7   no: no baseline yet\n"
            "\n");
  EXPECT_NE(FormatRunConditions(runs, {}, {0, 6}).find("band 6   yes"), std::string::npos);
  // What the daemon stored wins: the CPU-contended run was judged against
  // runs of other conditions, the calm one was not (its band was learning).
  const std::map<int64_t, probes::StoredRunVerdict> stored = {
      {5, {"j", 0, true, "judged"}},
      {4, {"j", 0, false, "learning"}},
      {6, {"j", 0, false, "regression_standing"}}};
  const std::string table = FormatRunConditions(runs, {}, {0}, stored);
  EXPECT_NE(table.find("cpu      yes\n"), std::string::npos) << table;
  EXPECT_NE(table.find("clean    no: no baseline yet\n"), std::string::npos) << table;
  EXPECT_NE(table.find("band 7   no: regression stands\n"), std::string::npos) << table;
  // Stressed beyond what the load model's runs covered, and no run as stressed.
  const std::map<int64_t, probes::StoredRunVerdict> outside = {
      {5, {"j", 0, false, "outside_model"}}};
  const std::string beyond = FormatRunConditions(runs, {}, {0}, outside);
  EXPECT_NE(beyond.find("cpu      no: beyond the load model\n"), std::string::npos) << beyond;
}

TEST(FormatRunConditions, NothingWhenNoRunHasConditions) {
  const std::vector<probes::RunRecord> runs = {RunWith(1, std::nullopt), RunWith(2, std::nullopt)};
  EXPECT_EQ(FormatRunConditions(runs, {}, {}), "");
}

}  // namespace
}  // namespace iowatch::daemon
