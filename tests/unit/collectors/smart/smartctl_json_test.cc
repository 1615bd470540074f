// smartctl's JSON per protocol (tests/fixtures/smart/README.md says where
// each document comes from): identity, verdict, temperature and its limit,
// ATA attributes, NVMe health, SCSI errors; no SMART, standby, and output
// that is not smartctl's.
#include "collectors/smart/smartctl_json.h"

#include <gtest/gtest.h>

#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::collectors {
namespace {

SmartReport Parse(const std::string& name) {
  const std::string path = iowatch::testing::FixturesDir() + "/smart/" + name;
  auto report = ParseSmartctlJson(iowatch::testing::ReadFile(path), path);
  EXPECT_TRUE(report.has_value()) << report.error().ToString();
  return report.value_or(SmartReport{});
}

TEST(SmartctlJson, AtaVerdictAttributesAndTheDrivesOwnTemperatureLimit) {
  const SmartReport r = Parse("ata.json");
  EXPECT_EQ(r.protocol, "ATA");
  EXPECT_EQ(r.model, "WDC WD40EFRX-68N32N0");
  EXPECT_EQ(r.serial, "WD-WCC7K1234567");
  EXPECT_EQ(r.firmware, "82.00A82");
  EXPECT_EQ(r.exit_status, kSmartctlErrorLog);
  EXPECT_EQ(r.passed, true);
  EXPECT_EQ(r.temperature_celsius, 38);
  EXPECT_EQ(r.temperature_limit_celsius, 65);  // SCT's op_limit_max, not limit_max
  EXPECT_EQ(r.power_on_hours, 35212u);
  EXPECT_EQ(r.power_cycles, 57u);
  ASSERT_EQ(r.attributes.size(), 7u);
  EXPECT_EQ(r.attributes[1], (SmartAttribute{5, "Reallocated_Sector_Ct", 199, 199, 140, 8, true}));
  EXPECT_EQ(r.attributes[4].name, "Current_Pending_Sector");
  EXPECT_EQ(r.attributes[4].raw, 2u);
  EXPECT_FALSE(r.nvme.has_value());
  EXPECT_TRUE(r.HasHealth());
}

TEST(SmartctlJson, NvmeHealthLog) {
  const SmartReport r = Parse("nvme.json");
  EXPECT_EQ(r.protocol, "NVMe");
  ASSERT_TRUE(r.nvme.has_value());
  EXPECT_EQ(*r.nvme, (NvmeHealth{0, 100, 10, 3, 43213876, 51298811, 0, 4, 17}));
  EXPECT_EQ(r.temperature_celsius, 41);
  EXPECT_EQ(r.temperature_limit_celsius, 82);  // the composite warning threshold
  EXPECT_TRUE(r.attributes.empty());
}

TEST(SmartctlJson, AFailingNvmeSaysSoInEveryField) {
  const SmartReport r = Parse("nvme_failing.json");
  EXPECT_EQ(r.passed, false);
  EXPECT_EQ(r.exit_status, kSmartctlDiskFailing);
  EXPECT_EQ(r.nvme->critical_warning, 5u);
  EXPECT_EQ(r.nvme->percentage_used, 104u);
  EXPECT_LT(r.nvme->available_spare, r.nvme->available_spare_threshold);
  EXPECT_EQ(r.nvme->media_errors, 129u);
  EXPECT_TRUE(r.messages.empty());  // a warning, not an error
}

TEST(SmartctlJson, ScsiDefectsAndUncorrectedErrors) {
  const SmartReport r = Parse("scsi.json");
  EXPECT_EQ(r.protocol, "SCSI");
  EXPECT_EQ(r.scsi.grown_defects, 12u);
  EXPECT_EQ(r.scsi.uncorrected_read, 2u);
  EXPECT_EQ(r.scsi.uncorrected_write, 0u);
  EXPECT_EQ(r.scsi.uncorrected_verify, 0u);
  EXPECT_EQ(r.temperature_limit_celsius, 60);  // drive_trip
  EXPECT_EQ(r.power_on_hours, 48213u);
}

TEST(SmartctlJson, NoSmartHereAndADiskAsleep) {
  const SmartReport virtio = Parse("virtio.json");  // this VM's disk
  // smartctl 7.3 ends a device it cannot type with its command-line bit.
  EXPECT_EQ(virtio.exit_status, kSmartctlCommandLine);
  EXPECT_FALSE(virtio.HasHealth());
  EXPECT_EQ(virtio.protocol, "");
  EXPECT_NE(virtio.messages.find("Unable to detect device type"), std::string::npos);
  const SmartReport asleep = Parse("standby.json");
  EXPECT_TRUE(asleep.InStandby());
  EXPECT_EQ(asleep.exit_status, kSmartctlOpenFailed);  // -n standby's exit(2)
  EXPECT_FALSE(asleep.HasHealth());
}

TEST(SmartctlJson, WhatIsNotSmartctlsJsonIsAnErrorNamingTheSource) {
  const std::string truncated =
      iowatch::testing::ReadFile(iowatch::testing::FixturesDir() + "/smart/truncated.json");
  for (const std::string& text :
       {truncated, std::string("smartctl: unrecognized option\n"),
        std::string("{\"json_format_version\":[1,0]}"), std::string("[1,2,3]"), std::string("")}) {
    const auto r = ParseSmartctlJson(text, "smartctl /dev/sdz");
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_NE(r.error().ToString().find("smartctl /dev/sdz"), std::string::npos);
    EXPECT_NE(r.error().ToString().find("expected smartctl's JSON"), std::string::npos);
  }
  // A field of the wrong type.
  const auto wrong =
      ParseSmartctlJson(R"({"smartctl":{"exit_status":0},"smart_status":{"passed":"yes"}})", "x");
  EXPECT_FALSE(wrong.has_value());
}

}  // namespace
}  // namespace iowatch::collectors
