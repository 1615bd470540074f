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

// Real outputs (tests/fixtures/smart/README.md): smartctl 7.3 renamed the SCSI
// identity fields (scsi_model_name, scsi_vendor, scsi_product, scsi_revision);
// 6.7 wrote model_name and revision. A SCSI disk's firmware is its revision.
TEST(SmartctlJson, ScsiIdentityInEverySmartctlVersion) {
  struct Case {
    const char* file;
    const char* model;
    const char* firmware;
    uint64_t hours;
    int64_t trip;
  };
  for (const Case& c :
       {Case{"scsi-6.7-seagate.json", "SEAGATE ST1200MM0088", "N004", 5675, 60},
        Case{"scsi-7.3-hitachi.json", "HITACHI H109060SESUN600G", "A31A", 22364, 85},
        Case{"scsi-7.4-seagate.json", "SEAGATE ST373453LC", "DX10", 91691, 68},
        Case{"scsi.json", "SEAGATE ST8000NM0075", "E004", 48213, 60}}) {
    SCOPED_TRACE(c.file);
    const SmartReport r = Parse(c.file);
    EXPECT_EQ(r.protocol, "SCSI");
    EXPECT_EQ(r.model, c.model);
    EXPECT_EQ(r.firmware, c.firmware);
    EXPECT_EQ(r.power_on_hours, c.hours);
    EXPECT_EQ(r.temperature_limit_celsius, c.trip);
    EXPECT_EQ(r.passed, true);
    EXPECT_EQ(r.scsi.grown_defects, c.trip == 60 && c.hours == 48213 ? 12u : 0u);
    EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  }
  // Without scsi_model_name (or model_name), the vendor and the product.
  const auto r = ParseSmartctlJson(
      R"({"smartctl":{"exit_status":0},"scsi_vendor":"HP","scsi_product":"MAS3735NC"})", "x");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->model, "HP MAS3735NC");
}

TEST(SmartctlJson, RealAtaAndNvmeOutputsOfSeveralVersions) {
  const SmartReport ata = Parse("ata-7.3-wdc.json");
  EXPECT_EQ(ata.model, "WDC WD20EFRX-68EUZN0");
  EXPECT_EQ(ata.power_on_hours, 47657u);
  EXPECT_EQ(ata.temperature_celsius, 34);
  ASSERT_FALSE(ata.attributes.empty());
  EXPECT_EQ(ata.attributes[0], (SmartAttribute{1, "Raw_Read_Error_Rate", 200, 200, 51, 114, true}));
  EXPECT_TRUE(ata.warnings.empty());
  const SmartReport old = Parse("nvme-7.1.json");
  EXPECT_EQ(old.model, "INTEL SSDPEKNW010T8");
  EXPECT_EQ(old.firmware, "002C");
  ASSERT_TRUE(old.nvme.has_value());
  EXPECT_EQ(old.power_cycles, 266u);
  const SmartReport nvme = Parse("nvme-7.3-samsung.json");
  EXPECT_EQ(nvme.model, "SAMSUNG MZVL21T0HCLR-00B00");
  ASSERT_TRUE(nvme.nvme.has_value());
  EXPECT_TRUE(nvme.nvme->media_errors.has_value());
  EXPECT_TRUE(nvme.warnings.empty());
}

// smartctl's document with `fields` (JSON members, without braces) added.
Result<SmartReport> With(const std::string& fields) {
  return ParseSmartctlJson(
      R"({"smartctl":{"exit_status":0},"smart_status":{"passed":true},)" + fields + "}",
      "smartctl /dev/sdz");
}

// The report's one warning, "" when it has none or several.
std::string OnlyWarning(const Result<SmartReport>& r) {
  EXPECT_TRUE(r.has_value());
  if (!r.has_value() || r->warnings.size() != 1) return "";
  return r->warnings.front();
}

TEST(SmartctlJson, ATemperatureOutOfRangeIsLeftOutAndNamed) {
  for (const std::string value :
       {"1e308", "-1e308", "1001", "-274", "36.5", "9223372036854775807"}) {
    SCOPED_TRACE(value);
    const auto r = With(R"("temperature":{"current":)" + value + R"(,"drive_trip":60})");
    const std::string w = OnlyWarning(r);
    EXPECT_NE(w.find("temperature.current"), std::string::npos) << w;
    EXPECT_FALSE(r->temperature_celsius.has_value());
    EXPECT_EQ(r->temperature_limit_celsius, 60);  // the rest stands
    EXPECT_TRUE(r->HasHealth());
  }
  const auto r = With(R"("temperature":{"current":1e308})");
  EXPECT_NE(OnlyWarning(r).find("1e+308"), std::string::npos) << OnlyWarning(r);
  // The bounds themselves are readings.
  EXPECT_EQ(With(R"("temperature":{"current":-273})")->temperature_celsius, -273);
  EXPECT_EQ(With(R"("temperature":{"current":1000})")->temperature_celsius, 1000);
  EXPECT_EQ(With(R"("temperature":{"current":41.0})")->temperature_celsius, 41);
}

TEST(SmartctlJson, NegativeCountsAreLeftOutAndNamed) {
  const auto hours = With(R"("power_on_time":{"hours":-5},"power_cycle_count":-1)");
  ASSERT_TRUE(hours.has_value());
  ASSERT_EQ(hours->warnings.size(), 2u);
  EXPECT_NE(hours->warnings[0].find("power_on_time.hours"), std::string::npos);
  EXPECT_NE(hours->warnings[0].find("-5"), std::string::npos);
  EXPECT_NE(hours->warnings[1].find("power_cycle_count"), std::string::npos);
  EXPECT_FALSE(hours->power_on_hours.has_value());
  EXPECT_FALSE(hours->power_cycles.has_value());

  const auto scsi = With(
      R"("scsi_grown_defect_list":-1,"scsi_error_counter_log":{"read":{"total_uncorrected_errors":-5},)"
      R"("write":{"total_uncorrected_errors":3}})");
  ASSERT_EQ(scsi->warnings.size(), 2u);
  EXPECT_NE(scsi->warnings[0].find("scsi_grown_defect_list"), std::string::npos);
  EXPECT_NE(scsi->warnings[1].find("scsi_error_counter_log.read.total_uncorrected_errors"),
            std::string::npos);
  EXPECT_FALSE(scsi->scsi.grown_defects.has_value());
  EXPECT_FALSE(scsi->scsi.uncorrected_read.has_value());
  EXPECT_EQ(scsi->scsi.uncorrected_write, 3u);

  // A count beyond 64 bits, a fraction.
  EXPECT_NE(OnlyWarning(With(R"("power_cycle_count":1e20)")).find("power_cycle_count"),
            std::string::npos);
  EXPECT_NE(OnlyWarning(With(R"("power_cycle_count":2.5)")).find("2.5"), std::string::npos);
  EXPECT_EQ(With(R"("power_cycle_count":18446744073709551615)")->power_cycles,
            18446744073709551615u);
}

TEST(SmartctlJson, NvmeFieldsOutOfRangeAreLeftOutAndTheOthersStay) {
  const auto r = With(
      R"("nvme_smart_health_information_log":{"critical_warning":256,"available_spare":100,)"
      R"("available_spare_threshold":10,"percentage_used":-3,"data_units_read":5,)"
      R"("data_units_written":6,"media_errors":-1,"num_err_log_entries":4,"unsafe_shutdowns":7})");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->warnings.size(), 3u);
  EXPECT_NE(r->warnings[0].find("nvme_smart_health_information_log.critical_warning"),
            std::string::npos);
  EXPECT_NE(r->warnings[0].find("256"), std::string::npos);
  EXPECT_NE(r->warnings[1].find("percentage_used"), std::string::npos);
  EXPECT_NE(r->warnings[2].find("media_errors"), std::string::npos);
  ASSERT_TRUE(r->nvme.has_value());
  EXPECT_EQ(*r->nvme, (NvmeHealth{std::nullopt, 100, 10, std::nullopt, 5, 6, std::nullopt, 4, 7}));
}

TEST(SmartctlJson, AnAtaAttributeOutOfRangeIsLeftOutWhole) {
  const auto r = With(
      R"("ata_smart_attributes":{"table":[)"
      R"({"id":5,"name":"Reallocated_Sector_Ct","value":100,"worst":100,"thresh":10,"raw":{"value":-1}},)"
      R"({"id":9,"name":"Power_On_Hours","value":300,"worst":99,"thresh":0,"raw":{"value":7}},)"
      R"({"id":197,"name":"Current_Pending_Sector","value":100,"worst":100,"thresh":0,"raw":{"value":2}}]})");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->warnings.size(), 2u);
  EXPECT_NE(r->warnings[0].find("5 (Reallocated_Sector_Ct).raw.value"), std::string::npos)
      << r->warnings[0];
  EXPECT_NE(r->warnings[1].find("9 (Power_On_Hours).value"), std::string::npos) << r->warnings[1];
  ASSERT_EQ(r->attributes.size(), 1u);
  EXPECT_EQ(r->attributes[0].id, 197u);
}

TEST(SmartctlJson, AnExitStatusOutOfRangeIsAnError) {
  const auto r = ParseSmartctlJson(R"({"smartctl":{"exit_status":-1}})", "smartctl /dev/sdz");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().ToString().find("smartctl.exit_status"), std::string::npos);
}

}  // namespace
}  // namespace iowatch::collectors
