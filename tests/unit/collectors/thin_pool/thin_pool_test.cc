// ParseThinPoolStatus and ParseThinPoolTable on a customer's real `dmsetup
// status` listing (insights-core's, two thin pools among other targets), on
// hand-made lines of every mode and state and of older kernels, and on
// malformed lines (the line number and what was expected); JoinThinPools and
// the pools' sizes in bytes.
#include "collectors/thin_pool/thin_pool.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::collectors {
namespace {

std::string ThinFixture(const std::string& name) {
  return iowatch::testing::ReadFile(iowatch::testing::FixturesDir() + "/thin-pool/" + name);
}

std::vector<ThinPoolStatus> Statuses(const std::string& fixture) {
  auto parsed = ParseThinPoolStatus(ThinFixture(fixture), fixture);
  EXPECT_TRUE(parsed) << parsed.error().ToString();
  return parsed ? *parsed : std::vector<ThinPoolStatus>{};
}

std::vector<ThinPoolTable> Tables(const std::string& fixture) {
  auto parsed = ParseThinPoolTable(ThinFixture(fixture), fixture);
  EXPECT_TRUE(parsed) << parsed.error().ToString();
  return parsed ? *parsed : std::vector<ThinPoolTable>{};
}

TEST(ThinPoolStatus, TheCustomersListingGivesItsTwoPoolsAndSkipsTheOtherTargets) {
  const auto pools = Statuses("insights-core-status.txt");
  ASSERT_EQ(pools.size(), 2u);
  const ThinPoolStatus expected_docker{
      .name = "rootvg-docker--pool",
      .start_sector = 0,
      .length_sectors = 129548288,
      .mode = ThinPoolMode::kRw,
      .usage = ThinPoolUsage{.transaction_id = 1,
                             .used_metadata_blocks = 20,
                             .total_metadata_blocks = 49152,
                             .used_data_blocks = 38,
                             .total_data_blocks = 126512,
                             .held_metadata_root = std::nullopt,
                             .discard_passdown = false,
                             .error_if_no_space = false,
                             .needs_check = false,
                             .metadata_low_watermark = std::nullopt}};
  EXPECT_EQ(pools[0], expected_docker);
  EXPECT_EQ(pools[1].name, "appsvg-lvapps_docker");
  ASSERT_TRUE(pools[1].usage);
  EXPECT_EQ(pools[1].usage->transaction_id, 441u);
  EXPECT_EQ(pools[1].usage->used_metadata_blocks, 697u);
  EXPECT_EQ(pools[1].usage->total_metadata_blocks, 2048u);
  EXPECT_EQ(pools[1].usage->used_data_blocks, 20663u);
  EXPECT_EQ(pools[1].usage->total_data_blocks, 102400u);
}

TEST(ThinPoolStatus, EveryModeAndState) {
  const auto pools = Statuses("states-status.txt");
  ASSERT_EQ(pools.size(), 6u);
  EXPECT_EQ(pools[0].name, "vg0-full");
  EXPECT_EQ(pools[0].mode, ThinPoolMode::kOutOfDataSpace);
  ASSERT_TRUE(pools[0].usage);
  EXPECT_EQ(pools[0].usage->used_data_blocks, pools[0].usage->total_data_blocks);
  EXPECT_EQ(pools[0].usage->discard_passdown, true);
  EXPECT_EQ(pools[0].usage->metadata_low_watermark, 3072u);

  EXPECT_EQ(pools[1].mode, ThinPoolMode::kRo);
  EXPECT_EQ(pools[1].usage->used_metadata_blocks, pools[1].usage->total_metadata_blocks);

  EXPECT_EQ(pools[2].name, "vg0-failed");
  EXPECT_EQ(pools[2].mode, ThinPoolMode::kFail);
  EXPECT_FALSE(pools[2].usage);
  EXPECT_EQ(pools[3].mode, ThinPoolMode::kError);
  EXPECT_FALSE(pools[3].usage);

  EXPECT_EQ(pools[4].mode, ThinPoolMode::kRw);
  EXPECT_EQ(pools[4].usage->needs_check, true);
  EXPECT_EQ(pools[4].usage->error_if_no_space, false);

  EXPECT_EQ(pools[5].usage->error_if_no_space, true);
  EXPECT_EQ(pools[5].usage->needs_check, false);
  EXPECT_EQ(pools[5].usage->held_metadata_root, 118u);
  EXPECT_EQ(pools[5].usage->metadata_low_watermark, 6144u);
}

TEST(ThinPoolStatus, OlderKernelsLinesStopEarlier) {
  const auto pools = Statuses("old-kernels-status.txt");
  ASSERT_EQ(pools.size(), 2u);
  ASSERT_TRUE(pools[0].usage);
  EXPECT_EQ(pools[0].usage->error_if_no_space, false);
  EXPECT_FALSE(pools[0].usage->needs_check);
  EXPECT_FALSE(pools[0].usage->metadata_low_watermark);
  ASSERT_TRUE(pools[1].usage);
  EXPECT_EQ(pools[1].mode, ThinPoolMode::kRw);  // no mode printed: the pool answered
  EXPECT_FALSE(pools[1].usage->discard_passdown);
  EXPECT_FALSE(pools[1].usage->error_if_no_space);
  EXPECT_EQ(pools[1].usage->used_data_blocks, 4096u);
}

TEST(ThinPoolStatus, NoDevicesFoundAndEmptyOutputAreNoPools) {
  EXPECT_TRUE(Statuses("none.txt").empty());
  const auto empty = ParseThinPoolStatus("", "dmsetup status");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  const auto tables = ParseThinPoolTable("No devices found\n", "dmsetup table");
  ASSERT_TRUE(tables);
  EXPECT_TRUE(tables->empty());
}

// Each malformed line fails the whole, naming its line and what was expected.
struct MalformedCase {
  std::string text;
  int line;
  std::string expected;  // a part of the message
};

TEST(ThinPoolStatus, MalformedLinesNameTheLineAndWhatWasExpected) {
  const std::string good = "vg-ok: 0 2048 thin-pool 1 1/64 1/16 - rw\n";
  const MalformedCase cases[] = {
      {good + "garbage\n", 2, "'NAME: START LENGTH TARGET [PARAMS...]'"},
      {good + "vg-x: 0 thin-pool\n", 2, "'NAME: START LENGTH TARGET"},
      {good + ": 0 2048 thin-pool 1 1/64 1/16 -\n", 2, "'NAME: START"},
      {"vg-x: 0 2048 thin-pool 1 1/64 1/16\n", 1, "<held root|->"},
      {"vg-x: 0 2048 thin-pool 1 1-64 1/16 -\n", 1, "<used>/<total metadata blocks>"},
      {"vg-x: 0 2048 thin-pool one 1/64 1/16 -\n", 1, "<transaction id>"},
      {"vg-x: 0 2048 thin-pool 1 1/64 1/16 - rx\n", 1, "ro, rw or out_of_data_space (field 5)"},
      {"vg-x: 0 2048 thin-pool 1 1/64 1/16 - rw passdown\n", 1,
       "discard_passdown or no_discard_passdown (field 6)"},
      {"vg-x: 0 2048 thin-pool 1 1/64 1/16 - rw discard_passdown queue\n", 1,
       "error_if_no_space or queue_if_no_space (field 7)"},
      {"vg-x: 0 2048 thin-pool 1 1/64 1/16 - rw discard_passdown queue_if_no_space check\n", 1,
       "needs_check or - (field 8)"},
      {"vg-x: 0 2048 thin-pool 1 1/64 1/16 - rw discard_passdown queue_if_no_space - x\n", 1,
       "metadata low watermark (a number) (field 9)"},
      {"vg-x: 0 2048 thin-pool Failed\n", 1, "'Fail' or 'Error'"},
      {good + good, 2, "one thin-pool line per device"},
  };
  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.text);
    const auto parsed = ParseThinPoolStatus(c.text, "dmsetup status");
    ASSERT_FALSE(parsed);
    EXPECT_EQ(parsed.error().code, ErrorCode::kParse);
    EXPECT_EQ(parsed.error().line, c.line);
    EXPECT_EQ(parsed.error().path, "dmsetup status");
    EXPECT_NE(parsed.error().message.find(c.expected), std::string::npos)
        << parsed.error().ToString();
    EXPECT_TRUE(parsed.error().ToString().starts_with("dmsetup status:" + std::to_string(c.line)))
        << parsed.error().ToString();
  }
}

TEST(ThinPoolTable, TheTablesOfTheCustomersPoolsAndEveryState) {
  const auto tables = Tables("insights-core-table.txt");
  ASSERT_EQ(tables.size(), 2u);
  const ThinPoolTable expected{.name = "appsvg-lvapps_docker",
                               .start_sector = 0,
                               .length_sectors = 104857600,
                               .metadata_device = "253:11",
                               .data_device = "253:12",
                               .data_block_sectors = 1024,
                               .low_water_mark_blocks = 0,
                               .features = {"skip_block_zeroing", "no_discard_passdown"}};
  EXPECT_EQ(tables[1], expected);
  const auto states = Tables("states-table.txt");
  ASSERT_EQ(states.size(), 6u);
  EXPECT_TRUE(states[0].features.empty());
  EXPECT_EQ(states[5].features, std::vector<std::string>{"error_if_no_space"});
}

TEST(ThinPoolTable, MalformedLinesNameTheLineAndWhatWasExpected) {
  const std::string good = "vg-ok: 0 2048 thin-pool 253:1 253:2 128 0\n";
  const MalformedCase cases[] = {
      {good + "vg-x: 0 2048 thin-pool 253:1 253:2 128\n", 2, "<low water mark>"},
      {"vg-x: 0 2048 thin-pool 253:1 253:2 0 0\n", 1, "<data block sectors>"},
      {"vg-x: 0 2048 thin-pool 253:1 253:2 128 0 2 skip_block_zeroing\n", 1,
       "the count of feature arguments that follow (1)"},
      {good + "nonsense line\n", 2, "'NAME: START LENGTH TARGET"},
  };
  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.text);
    const auto parsed = ParseThinPoolTable(c.text, "dmsetup table");
    ASSERT_FALSE(parsed);
    EXPECT_EQ(parsed.error().line, c.line);
    EXPECT_NE(parsed.error().message.find(c.expected), std::string::npos)
        << parsed.error().ToString();
  }
}

TEST(ThinPoolJoin, EachStatusWithItsTableAndItsSizesInBytes) {
  const auto pools =
      JoinThinPools(Statuses("insights-core-status.txt"), Tables("insights-core-table.txt"));
  ASSERT_EQ(pools.size(), 2u);
  const ThinPool& docker = pools[0];
  EXPECT_EQ(docker.name, "rootvg-docker--pool");
  ASSERT_TRUE(docker.table);
  // 126512 blocks of 1024 sectors: the device's length; 38 of them used.
  EXPECT_EQ(docker.DataBytes(), 129548288ull * 512);
  EXPECT_EQ(docker.DataUsedBytes(), 38ull * 1024 * 512);
  EXPECT_EQ(docker.MetadataBytes(), 49152ull * 4096);
  EXPECT_EQ(docker.MetadataUsedBytes(), 20ull * 4096);
  EXPECT_EQ(pools[1].DataBytes(), 104857600ull * 512);
  EXPECT_EQ(pools[1].DataUsedBytes(), 20663ull * 1024 * 512);
}

TEST(ThinPoolJoin, APoolWithoutTableHasNoDataBytesAndAFailedOneNoFigures) {
  const auto pools = JoinThinPools(Statuses("states-status.txt"), {});
  ASSERT_EQ(pools.size(), 6u);
  EXPECT_FALSE(pools[0].DataBytes());
  EXPECT_EQ(pools[0].MetadataBytes(), 4096ull * 4096);
  EXPECT_FALSE(pools[2].MetadataBytes());
  EXPECT_EQ(ThinPoolModeName(pools[2].status.mode), "fail");
}

TEST(ThinPoolStatus, ANameIsLabelTextAndMayHoldColons) {
  const auto pools = ParseThinPoolStatus(
      "docker-253:10-1234567-pool: 0 2048 thin-pool 1 1/64 1/16 -\n"
      "bad\x1b[2Jname: 0 2048 thin-pool 1 1/64 1/16 -\n",
      "dmsetup status");
  ASSERT_TRUE(pools) << pools.error().ToString();
  ASSERT_EQ(pools->size(), 2u);
  EXPECT_EQ((*pools)[0].name, "docker-253:10-1234567-pool");
  EXPECT_EQ((*pools)[1].name, "bad [2Jname");
}

}  // namespace
}  // namespace iowatch::collectors
