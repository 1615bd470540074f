// ReadZfsPools on node_exporter's kstat fixture (four pools: online,
// suspended without io, degraded), ParseZfsPoolIo and ParseZfsPoolState on
// the kstat formats and on malformed files (the path, the line and what was
// expected), and a tree without ZFS.
#include "collectors/zfs/zfs_pool.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::collectors {
namespace {

constexpr std::string_view kZfsIoText =
    "12 3 0x00 1 80 79205351707403 395818011156865\n"
    "nread    nwritten reads    writes   wtime    wlentime wupdate  rtime    rlentime rupdate  "
    "wcnt     rcnt    \n"
    "1884160  3206144  22       132      7155162  104112268 79210489694949 24168078 104112268 "
    "79210489849220 0        0       \n";

std::vector<ZfsPool> ZfsFixturePools() {
  const auto pools =
      ReadZfsPools(FileTree(iowatch::testing::FixturesDir() + "/node-exporter/proc"));
  EXPECT_TRUE(pools) << pools.error().ToString();
  return pools ? *pools : std::vector<ZfsPool>{};
}

TEST(ZfsPoolNodeExporterFixture, FourPoolsByNameWithTheFilesTheyHave) {
  const auto pools = ZfsFixturePools();
  ASSERT_EQ(pools.size(), 4u);
  EXPECT_EQ(pools[0].name, "pool1");
  EXPECT_EQ(pools[0].state, "ONLINE");
  ASSERT_TRUE(pools[0].io);
  EXPECT_EQ(pools[0].io->nread, 1884160u);
  EXPECT_EQ(pools[0].io->rupdate, 79210489849220u);
  EXPECT_EQ(pools[1].name, "pool2");
  EXPECT_EQ(pools[1].state, "SUSPENDED");
  EXPECT_EQ(pools[1].io, std::nullopt);
  EXPECT_EQ(pools[3].name, "poolz1");
  EXPECT_EQ(NodeExporterZfsPoolState(pools[3]), "degraded");
  ASSERT_TRUE(pools[3].io);
  EXPECT_EQ(pools[3].io->nwritten, 2680501248u);
  EXPECT_EQ(pools[3].io->wlentime, 6472105124093u);
}

TEST(ZfsPoolIoText, EveryFieldByItsName) {
  const auto io = ParseZfsPoolIo(kZfsIoText, "io");
  ASSERT_TRUE(io) << io.error().ToString();
  EXPECT_EQ(*io, (ZfsPoolIo{.nread = 1884160,
                            .nwritten = 3206144,
                            .reads = 22,
                            .writes = 132,
                            .wtime = 7155162,
                            .wlentime = 104112268,
                            .wupdate = 79210489694949,
                            .rtime = 24168078,
                            .rlentime = 104112268,
                            .rupdate = 79210489849220,
                            .wcnt = 0,
                            .rcnt = 0}));
}

TEST(ZfsPoolIoText, ColumnsInAnotherOrderAndOneMoreAreReadByName) {
  const auto io = ParseZfsPoolIo(
      "1 3 0x00 1 96 1 2\n"
      "rcnt wcnt rupdate rlentime rtime wupdate wlentime wtime writes reads nwritten nread extra\n"
      "12 11 10 9 8 7 6 5 4 3 2 1 99\n",
      "io");
  ASSERT_TRUE(io) << io.error().ToString();
  EXPECT_EQ(io->nread, 1u);
  EXPECT_EQ(io->rcnt, 12u);
  EXPECT_EQ(io->wupdate, 7u);
}

TEST(ZfsPoolStateText, OneWordTrimmed) {
  EXPECT_EQ(ParseZfsPoolState("DEGRADED\n", "state"), "DEGRADED");
  EXPECT_EQ(ParseZfsPoolState("ONLINE", "state"), "ONLINE");
}

TEST(ZfsPoolTree, NoSplIsNotFound) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const auto pools = ReadZfsPools(FileTree(dir.path()));
  ASSERT_FALSE(pools);
  EXPECT_EQ(pools.error().code, ErrorCode::kNotFound);
}

TEST(ZfsPoolTree, APoolDirectoryWithoutStateOrIoIsLeftOut) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "spl/kstat/zfs/gone");
  std::ofstream(dir.path() / "spl/kstat/zfs/arcstats") << "13 1 0x01 1 112 1 2\n";
  const auto pools = ReadZfsPools(FileTree(dir.path()));
  ASSERT_TRUE(pools) << pools.error().ToString();
  EXPECT_TRUE(pools->empty());
}

TEST(ZfsPoolMalformed, AValueThatIsNoNumberNamesTheLineAndTheField) {
  const auto io = ParseZfsPoolIo(
      "12 3 0x00 1 80 1 2\n"
      "nread nwritten reads writes wtime wlentime wupdate rtime rlentime rupdate wcnt rcnt\n"
      "1 2 3 4 5 6 7 8 9 ten 11 12\n",
      "/proc/spl/kstat/zfs/tank/io");
  ASSERT_FALSE(io);
  EXPECT_EQ(io.error().code, ErrorCode::kParse);
  EXPECT_EQ(io.error().ToString(),
            "/proc/spl/kstat/zfs/tank/io:3: expected a decimal number for rupdate, found 'ten'");
}

TEST(ZfsPoolMalformed, AMissingFieldNameNamesLineTwo) {
  const auto io = ParseZfsPoolIo(
      "12 3 0x00 1 80 1 2\n"
      "nread nwritten reads writes\n"
      "1 2 3 4\n",
      "io");
  ASSERT_FALSE(io);
  EXPECT_EQ(io.error().ToString(),
            "io:2: expected the kstat io field names, 'wtime' among them, found 'nread nwritten "
            "reads writes'");
}

TEST(ZfsPoolMalformed, FewerValuesThanNamesNamesLineThree) {
  const auto io = ParseZfsPoolIo(
      "12 3 0x00 1 80 1 2\n"
      "nread nwritten reads writes wtime wlentime wupdate rtime rlentime rupdate wcnt rcnt\n"
      "1 2 3\n",
      "io");
  ASSERT_FALSE(io);
  EXPECT_EQ(io.error().ToString(), "io:3: expected 12 values, one per name, found '1 2 3'");
}

TEST(ZfsPoolMalformed, AHeaderOfTheWrongShapeOrATruncatedFile) {
  auto io = ParseZfsPoolIo("nread nwritten\n1 2\n", "io");
  ASSERT_FALSE(io);
  EXPECT_EQ(io.error().ToString(),
            "io:1: expected the kstat header's 7 fields, found 'nread nwritten'");
  io = ParseZfsPoolIo("12 3 0x00 1 80 1 2\n", "io");
  ASSERT_FALSE(io);
  EXPECT_EQ(io.error().ToString(),
            "io:2: expected a line of names, then a line of values, found 'end of file'");
}

TEST(ZfsPoolMalformed, AnEmptyStateFileInATreeNamesItsPath) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "spl/kstat/zfs/tank");
  std::ofstream(dir.path() / "spl/kstat/zfs/tank/state") << "\n";
  const auto pools = ReadZfsPools(FileTree(dir.path()));
  ASSERT_FALSE(pools);
  EXPECT_EQ(pools.error().ToString(),
            (dir.path() / "spl/kstat/zfs/tank/state").string() +
                ":1: expected the pool's state (ONLINE, DEGRADED...), found ''");
}

}  // namespace
}  // namespace iowatch::collectors
