// `iowatch iotop`: its options, and its report from a snapshot's cgroup
// series (summed over devices or one device, sorted by bytes per second),
// as text and as JSON.
#include <gtest/gtest.h>

#include "cli/iotop/iotop_options.h"
#include "cli/iotop/iotop_report.h"

namespace iowatch::daemon {
namespace {

TEST(ParseIotopArgs, DeviceJsonDepthIntervalAndCount) {
  const auto o = ParseIotopArgs({"-d", "sda", "-oJSON", "--depth", "3", "2", "5"});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->device, "sda");
  EXPECT_TRUE(o->json);
  EXPECT_EQ(o->depth, 3u);
  EXPECT_EQ(o->interval_s, 2u);
  EXPECT_EQ(o->count, 5u);
  const auto once = ParseIotopArgs({});
  ASSERT_TRUE(once);
  EXPECT_EQ(once->count, 1u);  // no interval: one report over a second
  const auto forever = ParseIotopArgs({"1"});
  ASSERT_TRUE(forever);
  EXPECT_FALSE(forever->count);
}

TEST(ParseIotopArgs, RefusalsSayWhatWasExpected) {
  const std::pair<std::vector<std::string>, const char*> cases[] = {
      {{"-x"}, "unknown option '-x'"},
      {{"-o", "CSV"}, "-o takes JSON, found 'CSV'"},
      {{"--depth", "0"}, "--depth takes an integer from 1 to 16"},
      {{"0"}, "interval must be from 1 to 86400 seconds"},
      {{"1", "2", "3"}, "unexpected argument '3'"},
      {{"-d"}, "-d requires a value"},
  };
  for (const auto& [args, message] : cases) {
    const auto o = ParseIotopArgs(args);
    ASSERT_FALSE(o) << message;
    EXPECT_NE(o.error().ToString().find(message), std::string::npos) << o.error().ToString();
  }
}

CgroupSeries Pair(std::string cgroup, std::string unit, std::string device,
                  std::array<double, kCgroupRateCount> rates) {
  CgroupSeries s{std::move(cgroup), std::move(unit), std::move(device), {}, true, rates, rates};
  return s;
}

Snapshot Sample() {
  Snapshot s;
  s.cgroups.series = {
      Pair("system.slice/backup.service", "backup.service", "sda", {4096, 0, 1, 0}),
      Pair("system.slice/postgresql.service", "postgresql.service", "dm-0", {0, 8192, 0, 2}),
      Pair("system.slice/postgresql.service", "postgresql.service", "sda", {1048576, 0, 256, 0}),
      Pair("user.slice", "user.slice", "sda", {0, 0, 0, 0}),
  };
  s.cgroups.series.back().has_rates = false;  // its first sample: not reported
  s.cgroups.pressure = {
      {"system.slice/postgresql.service", "postgresql.service", {{12.5, 3, 1, 100}, std::nullopt}}};
  return s;
}

TEST(CgroupTop, SummedOverDevicesSortedByBytesPerSecond) {
  const auto rows = CgroupTop(Sample(), "");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].cgroup, "system.slice/postgresql.service");
  EXPECT_EQ(rows[0].read_bytes_per_second, 1048576);
  EXPECT_EQ(rows[0].write_bytes_per_second, 8192);
  EXPECT_EQ(rows[0].writes_per_second, 2);
  EXPECT_EQ(rows[0].pressure_some_avg10, 12.5);
  EXPECT_EQ(rows[1].unit, "backup.service");
  EXPECT_FALSE(rows[1].pressure_some_avg10);
  Snapshot tie = Sample();
  tie.cgroups.series.push_back(Pair("system.slice", "system.slice", "sda", {4096, 0, 1, 0}));
  const auto tied = CgroupTop(tie, "");
  ASSERT_EQ(tied.size(), 3u);
  EXPECT_EQ(tied[1].cgroup, "system.slice/backup.service");  // deeper first among equals
  EXPECT_EQ(tied[2].cgroup, "system.slice");
  const auto dm = CgroupTop(Sample(), "dm-0");
  ASSERT_EQ(dm.size(), 1u);
  EXPECT_EQ(dm[0].read_bytes_per_second, 0);
}

TEST(IotopFormat, TextTableAndJson) {
  const auto rows = CgroupTop(Sample(), "");
  EXPECT_EQ(FormatIotopText(rows, "2026-12-01T10:00:00+0000", "", 1),
            "2026-12-01T10:00:00+0000  cgroups by I/O\n"
            "       rkB/s        wkB/s        r/s        w/s   %psi  cgroup\n"
            "     1024.00         8.00     256.00       2.00  12.50  "
            "system.slice/postgresql.service\n\n");
  EXPECT_EQ(FormatIotopJson({rows[1]}, "t", "sda", 2),
            R"({"timestamp": "t", "device": "sda", "interval_seconds": 2, "cgroups": [{"cgroup": )"
            R"("system.slice/backup.service", "unit": "backup.service", "read_bytes_per_second": )"
            R"(4096, "write_bytes_per_second": 0, "reads_per_second": 1, "writes_per_second": 0, )"
            R"("pressure_some_avg10": null}]})"
            "\n");
}

// A cgroup is named by whoever can make one (a container,
// `systemd-run --unit`): its name reaches the terminal escaped, systemd's own
// escapes with their backslash doubled so that "\x1b" can only be a byte.
TEST(IotopFormat, CgroupNamesArePrintedEscaped) {
  CgroupTopRow row;
  row.cgroup = "system.slice/x\x1b]0;PWNED\a\x1b[2J.scope";
  row.unit = "x.scope";
  CgroupTopRow systemd;
  systemd.cgroup = "system.slice/system-getty.slice/getty\\x2dtty1.service";
  const std::string text = FormatIotopText({row, systemd}, "t", "sd\x1b[2J", 0);
  EXPECT_NE(text.find("t  cgroups by I/O on sd\\x1b[2J\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  system.slice/x\\x1b]0;PWNED\\x07\\x1b[2J.scope\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("getty\\\\x2dtty1.service\n"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\a'), std::string::npos) << text;
}

}  // namespace
}  // namespace iowatch::daemon
