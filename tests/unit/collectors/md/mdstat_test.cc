// ParseMdstat on node_exporter's /proc/mdstat fixture (its figures against
// every node_md_* line node_exporter exports from it), on sync lines written
// from md.c's format, and on malformed text (path:line and what was expected).
#include "collectors/md/mdstat.h"

#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "tests/unit/prometheus_samples.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::collectors {
namespace {

std::string MdFixtureDir() { return iowatch::testing::FixturesDir() + "/node-exporter"; }
std::string MdFixturePath() { return MdFixtureDir() + "/proc/mdstat"; }

std::vector<MdArray> MdFixtureArrays() {
  const auto arrays = ParseMdstat(iowatch::testing::ReadFile(MdFixturePath()), MdFixturePath());
  EXPECT_TRUE(arrays) << arrays.error().ToString();
  return arrays ? *arrays : std::vector<MdArray>{};
}

const MdArray& MdArrayNamed(const std::vector<MdArray>& arrays, std::string_view name) {
  for (const MdArray& array : arrays) {
    if (array.name == name) return array;
  }
  static const MdArray kMissing{.name = "missing"};
  ADD_FAILURE() << name << " not parsed";
  return kMissing;
}

using iowatch::testing::SampleKey;
using MdLabels = iowatch::testing::SampleLabels;

// What node_exporter's mdadm collector would export from these arrays.
std::map<std::string, double> MdNodeExporterSamples(const std::vector<MdArray>& arrays) {
  std::map<std::string, double> samples;
  const auto add = [&](std::string_view name, MdLabels labels, double value) {
    EXPECT_TRUE(samples.emplace(SampleKey(name, labels), value).second)
        << SampleKey(name, labels) << " twice";
  };
  for (const MdArray& array : arrays) {
    const NodeMdFigures f = NodeExporterMdFigures(array);
    const auto as_double = [](uint64_t v) { return static_cast<double>(v); };
    add("node_md_blocks", {{"device", array.name}}, as_double(f.blocks));
    add("node_md_blocks_synced", {{"device", array.name}}, as_double(f.blocks_synced));
    add("node_md_disks_required", {{"device", array.name}}, as_double(f.disks_required));
    add("node_md_disks", {{"device", array.name}, {"state", "active"}}, as_double(f.disks_active));
    add("node_md_disks", {{"device", array.name}, {"state", "failed"}}, as_double(f.disks_failed));
    add("node_md_disks", {{"device", array.name}, {"state", "spare"}}, as_double(f.disks_spare));
    for (const std::string_view state : kNodeMdStates) {
      add("node_md_state", {{"device", array.name}, {"state", std::string(state)}},
          f.StateValue(state));
    }
  }
  return samples;
}

TEST(MdstatNodeExporter, FiguresEqualEveryNodeMdLineOfItsOutput) {
  const auto expected = iowatch::testing::ParsePrometheusSamples(
      iowatch::testing::ReadFile(MdFixtureDir() + "/e2e-output-md.txt"));
  const auto actual = MdNodeExporterSamples(MdFixtureArrays());
  ASSERT_FALSE(expected.empty()) << "no lines read from e2e-output-md.txt";
  iowatch::testing::ExpectSameSamples(expected, actual, "node_exporter");
  EXPECT_EQ(actual.size(), expected.size());
  std::cout << "compared " << expected.size() << " node_md lines\n";
}

TEST(MdstatFixture, ReadsEveryArrayInFileOrder) {
  const auto arrays = MdFixtureArrays();
  std::vector<std::string> names;
  for (const MdArray& array : arrays) names.push_back(array.name);
  EXPECT_EQ(names, (std::vector<std::string>{"md3", "md127", "md0", "md4", "md6", "md8", "md201",
                                             "md7", "md9", "md10", "md11", "md12", "md126", "md219",
                                             "md00", "md120", "md101"}));
}

TEST(MdstatFixture, RecoveryWithAFailedMemberAndASpare) {
  const auto arrays = MdFixtureArrays();
  const MdArray& md6 = MdArrayNamed(arrays, "md6");
  EXPECT_TRUE(md6.active);
  EXPECT_EQ(md6.level, "raid1");
  EXPECT_EQ(md6.members, (std::vector<MdMember>{{.name = "sdb2", .role = 2, .failed = true},
                                                {.name = "sdc", .role = 1, .spare = true},
                                                {.name = "sda2", .role = 0}}));
  EXPECT_EQ(md6.blocks, 195310144u);
  EXPECT_EQ(md6.raid_disks, 2u);
  EXPECT_EQ(md6.in_sync_disks, 1u);
  EXPECT_EQ(md6.disk_map, "U_");
  ASSERT_TRUE(md6.sync);
  EXPECT_EQ(md6.sync->action, MdSyncAction::kRecovery);
  EXPECT_DOUBLE_EQ(md6.sync->percent, 8.5);
  EXPECT_EQ(md6.sync->done_blocks, 16775552u);
  EXPECT_EQ(md6.sync->total_blocks, 195310144u);
  EXPECT_DOUBLE_EQ(md6.sync->finish_minutes, 17.0);
  EXPECT_EQ(md6.sync->speed_kib_per_s, 259783u);
  EXPECT_FALSE(md6.sync_wait);
}

TEST(MdstatFixture, ResyncAndCheckLines) {
  const auto arrays = MdFixtureArrays();
  const MdArray& md8 = MdArrayNamed(arrays, "md8");
  ASSERT_TRUE(md8.sync);
  EXPECT_EQ(md8.sync->action, MdSyncAction::kResync);
  EXPECT_EQ(md8.sync->done_blocks, 16775552u);
  const MdArray& md201 = MdArrayNamed(arrays, "md201");
  ASSERT_TRUE(md201.sync);
  EXPECT_EQ(md201.sync->action, MdSyncAction::kCheck);
  EXPECT_DOUBLE_EQ(md201.sync->percent, 5.7);
  EXPECT_EQ(md201.sync->done_blocks, 114176u);
  EXPECT_EQ(md201.sync->total_blocks, 1993728u);
  EXPECT_DOUBLE_EQ(md201.sync->finish_minutes, 0.2);
  EXPECT_EQ(md201.sync->speed_kib_per_s, 114176u);
}

TEST(MdstatFixture, DelayedAndPendingResyncs) {
  const auto arrays = MdFixtureArrays();
  const MdArray& md9 = MdArrayNamed(arrays, "md9");
  EXPECT_EQ(md9.sync_wait, MdSyncWait::kDelayed);
  EXPECT_FALSE(md9.sync);
  EXPECT_EQ(NodeExporterMdFigures(md9).blocks_synced, 0u);
  const MdArray& md11 = MdArrayNamed(arrays, "md11");
  EXPECT_EQ(md11.read_only, MdReadOnly::kAutoReadOnly);
  EXPECT_EQ(md11.level, "raid1");
  EXPECT_EQ(md11.sync_wait, MdSyncWait::kPending);
  EXPECT_EQ(md11.members.size(), 5u);
  EXPECT_EQ(MdArrayNamed(arrays, "md101").read_only, MdReadOnly::kReadOnly);
  EXPECT_EQ(MdArrayNamed(arrays, "md3").read_only, MdReadOnly::kNo);
}

TEST(MdstatFixture, InactiveArraysWithAndWithoutALevel) {
  const auto arrays = MdFixtureArrays();
  const MdArray& md4 = MdArrayNamed(arrays, "md4");
  EXPECT_FALSE(md4.active);
  EXPECT_EQ(md4.level, "raid1");
  EXPECT_EQ(md4.raid_disks, 2u);  // parsed, though node_exporter does not read it
  const NodeMdFigures md4_figures = NodeExporterMdFigures(md4);
  EXPECT_EQ(md4_figures.disks_required, 0u);
  EXPECT_EQ(md4_figures.StateValue("inactive"), 1);
  const MdArray& md219 = MdArrayNamed(arrays, "md219");
  EXPECT_FALSE(md219.active);
  EXPECT_EQ(md219.level, "");
  EXPECT_EQ(md219.members.size(), 3u);
  EXPECT_EQ(md219.blocks, 7932u);
  EXPECT_FALSE(md219.raid_disks);
  EXPECT_EQ(NodeExporterMdFigures(md219).disks_spare, 3u);
}

TEST(MdstatFixture, DegradedRaid6WithAFailedMemberAndABitmapLine) {
  const auto arrays = MdFixtureArrays();
  const MdArray& md7 = MdArrayNamed(arrays, "md7");
  EXPECT_EQ(md7.level, "raid6");
  EXPECT_EQ(md7.raid_disks, 4u);
  EXPECT_EQ(md7.in_sync_disks, 3u);
  EXPECT_EQ(md7.disk_map, "U_UU");
  EXPECT_EQ(md7.chunk_kib, 512u);
  ASSERT_EQ(md7.members.size(), 4u);
  EXPECT_EQ(md7.members[3], (MdMember{.name = "sdc1", .role = 1, .failed = true}));
  EXPECT_FALSE(md7.sync);  // the bitmap line is not a sync
  EXPECT_FALSE(md7.sync_wait);
}

TEST(MdstatFixture, Raid0ChunksAndLinearHaveNoDiskCounts) {
  const auto arrays = MdFixtureArrays();
  EXPECT_EQ(MdArrayNamed(arrays, "md10").chunk_kib, 64u);
  EXPECT_EQ(MdArrayNamed(arrays, "md12").chunk_kib, 512u);
  EXPECT_EQ(MdArrayNamed(arrays, "md126").chunk_kib, 128u);
  EXPECT_EQ(MdArrayNamed(arrays, "md3").chunk_kib, 64u);
  const MdArray& md120 = MdArrayNamed(arrays, "md120");
  EXPECT_EQ(md120.level, "linear");
  EXPECT_FALSE(md120.chunk_kib);  // "0k rounding" is not a chunk
  EXPECT_FALSE(md120.raid_disks);
  EXPECT_EQ(md120.disk_map, "");
  EXPECT_EQ(NodeExporterMdFigures(md120).disks_active, 2u);
}

// The sync line as md.c's status_resync prints it:
//   "[%s]  %s =%3u.%u%% (%llu/%llu) finish=%lu.%lumin speed=%ldK/sec"
// with "reshape" for MD_RECOVERY_RESHAPE.
TEST(MdstatKernelFormat, ReshapeLine) {
  const auto arrays = ParseMdstat(
      "Personalities : [raid6] [raid5] [raid4]\n"
      "md0 : active raid5 sdd1[4] sdc1[2] sdb1[1] sda1[0]\n"
      "      3906764800 blocks super 1.2 level 5, 512k chunk, algorithm 2 [4/4] [UUUU]\n"
      "      [===>.................]  reshape = 15.2% (296861184/1953382400) "
      "finish=171.5min speed=160930K/sec\n"
      "      \n"
      "unused devices: <none>\n",
      "mdstat");
  ASSERT_TRUE(arrays) << arrays.error().ToString();
  ASSERT_EQ(arrays->size(), 1u);
  const MdArray& md0 = arrays->front();
  ASSERT_TRUE(md0.sync);
  EXPECT_EQ(*md0.sync, (MdSync{.action = MdSyncAction::kReshape,
                               .percent = 15.2,
                               .done_blocks = 296861184,
                               .total_blocks = 1953382400,
                               .finish_minutes = 171.5,
                               .speed_kib_per_s = 160930}));
  // procfs says "reshaping", for which node_exporter has no state label.
  const NodeMdFigures figures = NodeExporterMdFigures(md0);
  for (const std::string_view state : kNodeMdStates) EXPECT_EQ(figures.StateValue(state), 0);
  EXPECT_EQ(figures.blocks_synced, 296861184u);
}

// Released kernels' status_resync prints "resync" while a requested repair
// runs; with the RFC patch "md: simplify sync action print in status_resync"
// (linux-raid, December 2025) it prints md_sync_action_name(), "repair", in
// the same " %s =%3u.%u%% (%llu/%llu) finish=%lu.%lumin speed=%ldK/sec"
// format. procfs finds none of its words in that line: the array stays
// "active" with every block synced.
TEST(MdstatKernelFormat, RepairLineAndAFullPercent) {
  const auto arrays = ParseMdstat(
      "md1 : active raid1 sdb1[1](W) sda1[0]\n"
      "      1993728 blocks super 1.2 [2/2] [UU]\n"
      "      [=>...................]  repair =  5.7% (114176/1993728) finish=0.2min "
      "speed=114176K/sec\n"
      "\n"
      "md2 : active raid1 sdd1[1] sdc1[0]\n"
      "      1993728 blocks super 1.2 [2/2] [UU]\n"
      "      [====================>]  resync =100.0% (1993728/1993728) finish=0.0min "
      "speed=9000K/sec\n",
      "mdstat");
  ASSERT_TRUE(arrays) << arrays.error().ToString();
  ASSERT_EQ(arrays->size(), 2u);
  const MdArray& md1 = (*arrays)[0];
  ASSERT_TRUE(md1.sync);
  EXPECT_EQ(md1.sync->action, MdSyncAction::kRepair);
  EXPECT_TRUE(md1.members[0].write_mostly);
  const NodeMdFigures figures = NodeExporterMdFigures(md1);
  EXPECT_EQ(figures.StateValue("active"), 1);
  EXPECT_EQ(figures.blocks_synced, 1993728u);
  ASSERT_TRUE((*arrays)[1].sync);
  EXPECT_DOUBLE_EQ((*arrays)[1].sync->percent, 100.0);
}

// md.c prints each flag in its own parentheses: (W) and (J) before (F) or
// (S) and (R).
TEST(MdstatKernelFormat, MemberFlags) {
  const auto arrays = ParseMdstat(
      "md5 : active raid5 sda1[0](W)(F) sdb1[1](R) nvme0n1p1[3](J) sdc1[4](S)\n"
      "      1000 blocks super 1.2 level 5, 64k chunk, algorithm 2 [3/2] [U_U]\n",
      "mdstat");
  ASSERT_TRUE(arrays) << arrays.error().ToString();
  const auto& m = arrays->front().members;
  ASSERT_EQ(m.size(), 4u);
  EXPECT_TRUE(m[0].write_mostly && m[0].failed);
  EXPECT_TRUE(m[1].replacement && !m[1].spare);
  EXPECT_TRUE(m[2].journal);
  EXPECT_EQ(m[2].role, 3u);
  EXPECT_TRUE(m[3].spare);
}

// raid10's status ("%dK chunks", md/raid10.c), clustered md's
// "resync=REMOTE", and an inactive array without disks (md_seq_show prints
// its header only).
TEST(MdstatKernelFormat, Raid10RemoteResyncAndAnArrayWithoutDisks) {
  const auto arrays = ParseMdstat(
      "md20 : active raid10 sdd[3] sdc[2] sdb[1] sda[0]\n"
      "      2095104 blocks super 1.2 512K chunks 2 near-copies [4/4] [UUUU]\n"
      "      \tresync=REMOTE\n"
      "\n"
      "md21 : inactive\n"
      "\n"
      "unused devices: <none>\n",
      "mdstat");
  ASSERT_TRUE(arrays) << arrays.error().ToString();
  ASSERT_EQ(arrays->size(), 2u);
  EXPECT_EQ((*arrays)[0].chunk_kib, 512u);
  EXPECT_EQ((*arrays)[0].raid_disks, 4u);
  EXPECT_EQ((*arrays)[0].sync_wait, MdSyncWait::kRemote);
  const MdArray& md21 = (*arrays)[1];
  EXPECT_FALSE(md21.active);
  EXPECT_TRUE(md21.members.empty());
  EXPECT_FALSE(md21.blocks);
  EXPECT_EQ(NodeExporterMdFigures(md21).StateValue("inactive"), 1);
}

TEST(MdstatMalformed, NamesPathLineAndTheExpectedForm) {
  const std::string header = "Personalities : [raid1]\nmd0 : active raid1 sdb1[1] sda1[0]\n";
  struct Case {
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {header + "      248896 blocks [2/",
       "mdstat:3: expected '<blocks> blocks [super <version>] [<chunk>k chunk(s)] [[<n>/<m>] "
       "[<U_ map>]]', found '248896 blocks [2/'"},
      {header + "      24889x blocks [2/2] [UU]\n", "mdstat:3: expected '<blocks> blocks"},
      {header + "      248896 blocks [2/2] [UU]\n      [=>....]  resync = 8.5% (16775552) "
                "finish=17.0min speed=259783K/sec\n",
       "mdstat:4: expected '[<bar>] resync|recovery|check|repair|reshape = <percent>% "
       "(<done>/<total>) finish=<minutes>min speed=<K>K/sec', found '[=>....]  resync = 8.5% "
       "(16775552) finish=17.0min speed=259783K/sec'"},
      {header + "      248896 blocks [2/2] [UU]\n      resync=LATER\n",
       "mdstat:4: expected 'resync=DELAYED|PENDING|REMOTE', found 'resync=LATER'"},
      {"md0 : active raid1 sdb1[x] sda1[0]\n", "mdstat:1: expected '<name> : active|inactive"},
      {"md0 :\n", "mdstat:1: expected '<name> : active|inactive"},
  };
  for (const Case& c : cases) {
    const auto arrays = ParseMdstat(c.text, "mdstat");
    ASSERT_FALSE(arrays) << c.text;
    EXPECT_EQ(arrays.error().code, ErrorCode::kParse);
    EXPECT_TRUE(arrays.error().ToString().starts_with(c.error))
        << arrays.error().ToString() << "\nwanted: " << c.error;
  }
}

TEST(MdstatRead, ReadsMdstatUnderProcfsAndNamesItWhenAbsent) {
  const auto arrays = ReadMdstat(FileTree(MdFixtureDir() + "/proc"));
  ASSERT_TRUE(arrays) << arrays.error().ToString();
  EXPECT_EQ(arrays->size(), 17u);
  const auto none = ReadMdstat(FileTree(iowatch::testing::FixturesDir() + "/cciss/proc"));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  EXPECT_NE(none.error().ToString().find("cciss/proc/mdstat"), std::string::npos);
}

TEST(MdstatEmpty, NoArraysIsNoError) {
  const auto arrays = ParseMdstat(
      "Personalities : [linear] [raid0] [raid1]\nunused devices: <none>\n", "/proc/mdstat");
  ASSERT_TRUE(arrays) << arrays.error().ToString();
  EXPECT_TRUE(arrays->empty());
  const auto nothing = ParseMdstat("", "/proc/mdstat");
  ASSERT_TRUE(nothing);
  EXPECT_TRUE(nothing->empty());
}

}  // namespace
}  // namespace iowatch::collectors
